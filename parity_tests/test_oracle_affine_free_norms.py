"""A NumPy LayerNorm without gain and shift: the interface error says no gain or shift was found
(the arrays its forward made named as such, not as parameters) and how to go on, `--map weight=-
--map bias=-`; the match then names them as not compared (a quick check's guess), while an
assignment's own '-' maps stay its declaration. A planted bug stays MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text

NO_AFFINE = {"weight": "-", "bias": "-"}


@pytest.fixture
def norms(candidate_file):
    return candidate_file("affine_free_norms.py")


def test_a_norm_without_gain_and_shift_says_so_and_how_to_go_on(norms):
    res = check("layernorm", f"{norms}:PlainLayerNorm", examples=5)
    assert res.verdict == "interface_error", render_text(res)
    assert "no LayerNorm gain weight" in res.message
    assert "--map weight=- --map bias=-" in res.message
    assert "made by its forward" in res.message and "x2d" in res.message


def test_mapped_out_the_match_names_the_gain_and_shift_as_not_compared(norms):
    res = check("layernorm", f"{norms}:PlainLayerNorm", examples=10, name_map=NO_AFFINE)
    assert res.verdict == "match", render_text(res)
    gap = res.gaps.get("parameters", "")
    assert "weight (mapped to '-' by --map)" in gap and "bias (mapped to '-' by --map)" in gap


def test_an_assignment_mapping_them_out_declares_them_absent(norms):
    res = check("layernorm", f"{norms}:PlainLayerNorm", examples=10, name_map=NO_AFFINE,
                require=("parameters",))
    assert res.verdict == "match", render_text(res)
    assert "parameters" not in res.gaps


def test_a_planted_backward_bug_in_that_norm_is_a_mismatch(norms):
    res = check("layernorm", f"{norms}:PlainLayerNormBUG", examples=25, name_map=NO_AFFINE, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
