"""An encoder-only (BERT-style) model checked as `model`: its interface error now begins with the
likely cause, and the components that compare its parts, instead of only listing every unplaced
decoder weight. A model with any decoder-named parameter is not called encoder-only."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.encoder_only import message  # noqa: E402


class _Space:
    def __init__(self, names):
        self.names = names


REF = {"encoder.layers.0.self_attn.q_proj.weight": (4, 4), "decoder.layers.0.cross_attn.q_proj.weight": (4, 4),
       "decoder.layers.0.self_attn.q_proj.weight": (4, 4)}
DECODER = [k for k in REF if k.startswith("decoder.")]


def test_an_encoder_only_model_is_named_so(candidate_file):
    res = check("model", f"{candidate_file('encoder_only_models.py')}:EncoderOnlyModel", examples=5)
    assert res.verdict == "interface_error", render_text(res)
    assert "encoder-only" in render_text(res), render_text(res)


def test_the_message_needs_every_decoder_weight_missing_and_no_decoder_name():
    assert message("model", _Space(["blocks.0.w.weight"]), DECODER, REF)
    assert message("model", _Space(["dec_stack.0.w.weight"]), DECODER, REF) is None
    assert message("model", _Space(["blocks.0.w.weight"]), DECODER[:1], REF) is None
    assert message("encoder_layer", _Space(["blocks.0.w.weight"]), DECODER, REF) is None
