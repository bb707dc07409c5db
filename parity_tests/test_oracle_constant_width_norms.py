"""A LayerNorm whose width is a constant of its file (`nn.LayerNorm([WIDTH])`, no size taken): the
global-width probe now runs for layernorm too, reading the norm's vectors, and every example is
drawn at that width. Before, it was an interface error ("parameters the reference has no
counterpart for: norm.weight (16,)")."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def norms(candidate_file):
    return candidate_file("constant_width_norms.py")


def test_a_norm_of_a_constant_width_matches(norms):
    res = check("layernorm", f"{norms}:ConstantWidthNorm", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("fixed by the candidate's code at 16" in n for n in res.notes), res.notes


def test_its_unbiased_twin_is_a_mismatch(norms):
    res = check("layernorm", f"{norms}:ConstantWidthNormBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
