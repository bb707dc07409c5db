"""Layers that normalise before each sublayer, with no `norm_first` argument: the natural command
finds the norm order by behaviour (every norm's gain 0 through its weights, output minus input the
same at every position) and checks them as pre-norm, also where the code fixes the feed-forward's
width (probed at that width). A residual planted on the normalised input
and a planted scale by d_k stay MISMATCH; a post-norm layer is still checked as post-norm. A norm order
found so is the gap `norm_order` (the paper's layer is post-norm): grading fails it unless the
assignment sets norm_first."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.core.completeness import REQUIREMENTS

PRE_NORM = "normalises before each sublayer"


@pytest.fixture
def layers(candidate_file):
    return candidate_file("pre_norm_layers.py")


@pytest.mark.parametrize("component, name", [("encoder_layer", "PreNormEncoderLayer"),
                                             ("decoder_layer", "PreNormDecoderLayer"),
                                             ("encoder_layer", "PreNormBlockFixedWidth")])
def test_a_pre_norm_layer_without_a_norm_first_argument_matches(layers, component, name):
    res = check(component, f"{layers}:{name}", examples=6)
    assert res.verdict == "match", render_text(res)
    assert any(PRE_NORM in n for n in res.notes), res.notes


@pytest.mark.parametrize("name", ["PreNormEncoderLayer_BUG", "PreNormEncoderLayerScale_BUG"])
def test_planted_bugs_in_a_pre_norm_layer_are_mismatches(layers, name):
    res = check("encoder_layer", f"{layers}:{name}", examples=6)
    assert res.verdict == "mismatch", render_text(res)
    if name.endswith("Scale_BUG"):     # still pre-norm in structure: found so, and still wrong
        assert any(PRE_NORM in n for n in res.notes), res.notes


def test_a_post_norm_layer_is_not_read_as_pre_norm(candidate_file):
    path = candidate_file("tutorial_styles/torch_misc_style.py")
    res = check("encoder_layer", f"{path}:TransformerBlock", examples=6)
    assert not any(PRE_NORM in n for n in res.notes), res.notes
    assert res.verdict == "match", render_text(res)


def test_a_probed_pre_norm_order_is_the_gap_norm_order_and_grading_fails_it(layers):
    quick = check("encoder_layer", f"{layers}:PreNormEncoderLayer", examples=4)
    assert quick.verdict == "match" and "norm_order" in quick.gaps, render_text(quick)
    assert "found by probing" in quick.gaps["norm_order"], quick.gaps
    graded = check("encoder_layer", f"{layers}:PreNormEncoderLayer", examples=4, require=REQUIREMENTS)
    assert graded.verdict == "incomplete" and "norm order" in graded.message, render_text(graded)


def test_an_assignment_setting_norm_first_grades_a_pre_norm_layer_in_full(layers):
    res = check("encoder_layer", f"{layers}:PreNormEncoderLayer", examples=4, require=REQUIREMENTS,
                settings={"norm_first": True})
    assert res.verdict == "match" and "norm_order" not in res.gaps, render_text(res)
    bug = check("encoder_layer", f"{layers}:PreNormEncoderLayer_BUG", examples=6, require=REQUIREMENTS,
                settings={"norm_first": True}, shrink=False)
    assert bug.verdict == "mismatch", render_text(bug)


def test_a_post_norm_layer_has_no_norm_order_gap(candidate_file):
    path = candidate_file("tutorial_styles/torch_misc_style.py")
    res = check("encoder_layer", f"{path}:TransformerBlock", examples=4, require=("norm_order",))
    assert res.verdict == "match" and "norm_order" not in res.gaps, render_text(res)
