"""Per-head widths named in the plural (`d_queries`, `d_keys`, `d_values`: the width of one head's
queries and values, as a widely read tutorial names them) get the head width. Before, the
attention was an interface error ("'d_queries' is required, but the oracle has nothing left to
pass")."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def plural(candidate_file):
    return candidate_file("plural_head_widths.py")


def test_an_attention_taking_d_queries_and_d_values_matches(plural):
    res = check("mha", f"{plural}:PluralHeadWidthAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("'d_values': passed the head width" in n for n in res.notes), res.notes


def test_its_planted_scale_bug_is_a_mismatch(plural):
    res = check("mha", f"{plural}:PluralHeadWidthAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
