"""A constructor naming its model width `hidden_size` (a name the inner width could also have)
beside a name only the inner width has (`filter_size`, `intermediate_size`): the unambiguous name
binds first, so `hidden_size` is d_model (it took d_ff, and the inner width came by position:
swapped sizes, INTERFACE_ERROR). A planted bug stays MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def widths(candidate_file):
    return candidate_file("shared_width_names.py")


@pytest.mark.parametrize("name", ["FilterSizeFeedForward", "IntermediateFeedForward"])
def test_hidden_size_beside_an_inner_width_name_is_the_model_width(widths, name):
    res = check("ffn", f"{widths}:{name}", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_there_is_a_mismatch(widths):
    res = check("ffn", f"{widths}:FilterSizeFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
