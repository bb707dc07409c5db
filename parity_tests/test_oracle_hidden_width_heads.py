"""Constructors naming each head's width `d_hidden` (a feed-forward word elsewhere) beside
`d_model` and the head count: in attention, and in a layer that names its feed-forward width
`d_ff` too, `d_hidden` is the width of one head (d_model // num_heads), as `hidden_size` already
was. Before, attention was an interface error ("'d_hidden' is required, but the oracle has nothing
left to pass") and the layer gave `d_hidden` its feed-forward width. Planted bug: MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

FILE = "hidden_width_heads.py"


@pytest.mark.parametrize("component,name", [("mha", "HeadListAttention"),
                                            ("encoder_layer", "HeadListEncoderLayer")])
def test_d_hidden_beside_d_model_and_heads_is_one_heads_width(candidate_file, component, name):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=8)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "constructor argument 'd_hidden'" in text and "a width of one head" in text, text


@pytest.mark.parametrize("component,name", [("mha", "HeadListAttentionBUG"),
                                            ("encoder_layer", "HeadListEncoderLayerBUG")])
def test_a_planted_scale_bug_with_d_hidden_heads_is_a_mismatch(candidate_file, component, name):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
