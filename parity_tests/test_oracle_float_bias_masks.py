"""Layers whose attention takes its mask only as a float bias added to the scores (a boolean
(B, 1, Tq, Tk) mask raises in their own conversion): masks are handed over additive, not with 3
axes (a 3-axis boolean mask would run, added as 0 / 1, and call correct code MISMATCH). A planted
scale bug stays MISMATCH; a layer whose float mask hides nothing is not switched."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def layers(candidate_file):
    return candidate_file("float_bias_masks.py")


def test_a_float_bias_mask_layer_gets_additive_masks_and_matches(layers):
    res = check("encoder_layer", f"{layers}:FloatBiasLayer", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("float added to the scores" in n for n in res.notes), res.notes
    assert not any("3 axes" in n for n in res.notes), res.notes


def test_a_planted_scale_bug_in_a_float_bias_mask_layer_is_a_mismatch(layers):
    res = check("encoder_layer", f"{layers}:FloatBiasLayerBUG", examples=10, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_float_mask_that_hides_nothing_is_not_taken_for_the_convention(layers):
    res = check("encoder_layer", f"{layers}:FloatBiasIgnoredLayer", examples=10)
    assert res.verdict != "match", render_text(res)
    assert not any("float added to the scores" in n for n in res.notes), res.notes
