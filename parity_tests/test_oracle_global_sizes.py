"""A model width fixed by a module-level global: found from the built module's parameter shapes
and the width its forward accepts; every example is drawn at that width (said in the notes)."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("global_sizes.py")


@pytest.mark.parametrize("component,name", [("mha", "GlobalWidthAttention"),
                                            ("mha", "GlobalWidthCausalAttention"),
                                            ("ffn", "GlobalWidthFeedForward")])
def test_global_width_is_learned_and_matches(component, name):
    res = check(component, f"{FILE}:{name}", examples=5)
    assert res.verdict == "match", render_text(res)
    assert any("fixed by the candidate's code at 24" in n for n in res.notes), res.notes


def test_global_width_with_a_bug_is_a_mismatch():
    res = check("mha", f"{FILE}:GlobalWidthAttentionWrongAxis", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_width_taken_as_argument_is_not_fixed():
    res = check("mha", os.path.join(os.path.dirname(FILE), "config_items.py")
                + ":OutWidthAttention", examples=3)
    assert res.verdict == "match", render_text(res)
    assert not any("fixed by the candidate's code" in n for n in res.notes), res.notes
