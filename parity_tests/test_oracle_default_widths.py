"""Feed-forward widths a candidate's code fixes as a constant: a layer that takes no d_ff builds its
feed-forward at that block's own default width (`FeedForward(d_model, d_ff=2048)` inside
`EncoderLayer(d_model, heads)`), or a feed-forward hard-codes its hidden width. The oracle reads the
width from the built module's weight shapes and draws the reference's d_ff at it; planted bugs stay
MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def widths(candidate_file):
    return candidate_file("default_width_layers.py")


@pytest.mark.parametrize("comp,name,width", [("encoder_layer", "DefaultWidthEncoderLayer", 40),
                                             ("decoder_layer", "DefaultWidthDecoderLayer", 40),
                                             ("ffn", "ConstantWidthFeedForward", 24)])
def test_a_feed_forward_width_fixed_by_a_default_is_read_from_the_weights(widths, comp, name, width):
    res = check(comp, f"{widths}:{name}", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any(f"fixed by the candidate's code at {width}" in n for n in res.notes), res.notes


@pytest.mark.parametrize("comp,name", [("encoder_layer", "DefaultWidthEncoderLayerBUG"),
                                       ("decoder_layer", "DefaultWidthDecoderLayerBUG"),
                                       ("ffn", "ConstantWidthFeedForwardBUG")])
def test_a_planted_bug_behind_a_fixed_width_is_a_mismatch(widths, comp, name):
    res = check(comp, f"{widths}:{name}", examples=20, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
