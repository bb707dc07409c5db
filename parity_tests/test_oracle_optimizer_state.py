"""NumPy dense layers keeping optimizer state of their weight's shape beside it (Adam's `moment_p` /
`rmsprop_p`, a momentum `velocity`), read only by their own update method: the state is no parameter
(reading/forward_reads.py), so it is neither taken for a weight nor for a gated feed-forward's second
up-projection. Before, both layers were an interface error calling them "a gated feed-forward".
Attention projections as wide as heads * d_model are no gate either: they are named for what they
are (recognise/wide_heads.py). A real NumPy gate still is."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise import gated_ffn, wide_heads


@pytest.fixture
def layers(candidate_file):
    return candidate_file("optimizer_state_layers.py")


def test_a_feed_forward_with_momentum_state_matches(layers):
    res = check("ffn", f"{layers}:MomentumFeedForward", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_activation_in_that_feed_forward_is_a_mismatch(layers):
    res = check("ffn", f"{layers}:MomentumFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_an_encoder_layer_of_adam_state_dense_layers_matches(layers):
    res = check("encoder_layer", f"{layers}:AdamStateEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)
    assert "moment_p" not in render_text(res) and "rmsprop_p" not in render_text(res)


def test_a_planted_scale_in_that_layer_is_a_mismatch(layers):
    res = check("encoder_layer", f"{layers}:AdamStateEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_numpy_gate_read_by_its_forward_is_still_named(layers):
    res = check("ffn", f"{layers}:NumpyGLUFeedForward", examples=10)
    assert res.verdict == "interface_error", render_text(res)
    assert "gated feed-forward" in render_text(res), render_text(res)


def test_attention_projections_heads_times_wide_are_no_gate(candidate_file):
    pytest.importorskip("torch")
    res = check("encoder_layer", f"{candidate_file('wide_head_attention.py')}:WideHeadEncoderLayer", examples=10)
    assert res.verdict == "interface_error", render_text(res)
    text = render_text(res)
    assert "gated feed-forward" not in text and "every head the whole model width" in text, text
    shapes = {"mha.W_q.weight": (12, 4), "mha.W_k.weight": (12, 4), "mha.W_v.weight": (12, 4),
              "mha.W_o.weight": (4, 12), "ffn.0.weight": (6, 4), "ffn.2.weight": (4, 6)}
    assert gated_ffn.unclaimed("encoder_layer", ["mha.W_q.weight"], shapes) is None
    assert "3 heads x d_model 4" in wide_heads.message("encoder_layer", ["mha.W_q.weight"], shapes)
    packed = {"attn.qkv.weight": (12, 4), "attn.out.weight": (4, 4)}
    assert wide_heads.message("encoder_layer", ["attn.qkv.weight"], packed) is None
