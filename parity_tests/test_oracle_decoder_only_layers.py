"""A decoder-only (GPT-style) layer, self-attention and feed-forward with no cross-attention:
checked as decoder_layer it stops with an interface error that says why (no memory to attend to)
and names encoder_layer; checked as encoder_layer, whose mask names now include a decoder's
self-attention mask (`tgt_mask`), it is compared under causal masks. A planted bug is a
MISMATCH there."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def layers(candidate_file):
    return candidate_file("decoder_only_layers.py")


def test_a_decoder_only_layer_checked_as_decoder_layer_is_told_why_and_what_to_use(layers):
    res = check("decoder_layer", f"{layers}:CausalOnlyDecoderLayer", examples=4)
    assert res.verdict == "interface_error", render_text(res)
    text = render_text(res)
    assert "decoder-only" in text and "check the layer as encoder_layer" in text, text


def test_a_decoder_only_layer_matches_as_an_encoder_layer_with_its_mask_compared(layers):
    res = check("encoder_layer", f"{layers}:CausalOnlyDecoderLayer", examples=15)
    assert res.verdict == "match", render_text(res)
    assert "masks" not in res.gaps, res.gaps


def test_a_planted_bug_in_a_decoder_only_layer_is_a_mismatch(layers):
    res = check("encoder_layer", f"{layers}:CausalOnlyDecoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_decoder_only_model_checked_as_model_is_told_why_and_what_to_check(layers):
    res = check("model", f"{layers}:TinyGPT", examples=3)
    assert res.verdict == "interface_error", render_text(res)
    text = render_text(res)
    assert "decoder-only (GPT-style) language model" in text, text
    assert "each block as encoder_layer" in text, text
