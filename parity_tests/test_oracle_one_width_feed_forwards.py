"""A feed-forward whose constructor takes one width under a name no alias holds (`layer_dim`,
`units`): when every weight's shape scales with it, it is the model width and gets d_model
(recognise/lone_width), not d_ff by position; a hidden width beside a model width the file fixes
keeps its d_ff. Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.lone_width import scales_with  # noqa: E402

MODEL_WIDTH = "the feed-forward's one width argument"


@pytest.fixture
def ffns(candidate_file):
    return candidate_file("one_width_feed_forwards.py")


@pytest.mark.parametrize("name, ratio", [("LayerDimFeedForward", 4), ("UnitsBlock", 2)])
def test_a_lone_width_that_scales_every_weight_is_the_model_width(ffns, name, ratio):
    res = check("ffn", f"{ffns}:{name}", examples=8)
    text = render_text(res)
    assert res.verdict == "match", text
    assert MODEL_WIDTH in text and f"fixed by the candidate's code at {ratio} x d_model" in text


@pytest.mark.parametrize("name", ["LayerDimFeedForwardBUG", "UnitsBlockBUG"])
def test_a_planted_bug_beside_a_lone_model_width_is_a_mismatch(ffns, name):
    res = check("ffn", f"{ffns}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_lone_hidden_width_beside_a_fixed_model_width_is_not_read_so(ffns):
    res = check("ffn", f"{ffns}:FixedWidthMLP", examples=8)
    text = render_text(res)
    assert res.verdict == "match", text
    assert MODEL_WIDTH not in text and "fixed by the candidate's code at 16" in text


@pytest.mark.parametrize("a, b, scales", [
    ([(3,), (3, 12), (12,), (12, 3)], [(5,), (5, 20), (20,), (20, 5)], True),
    ([(3, 16), (16,), (16, 3)], [(5, 16), (16,), (16, 5)], False),      # a width stays put
    ([(3,), (12,)], [(5,), (20,)], False),                                # no matrix
    ([], [], False),
])
def test_only_shapes_scaling_on_every_axis_count(a, b, scales):
    assert scales_with(a, b, 3, 5) is scales
