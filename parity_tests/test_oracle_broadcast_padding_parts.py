"""Layers taking their key padding as a broadcastable part, (batch, 1, 1, S) or (batch, 1, S)
(recognise/part_layout.py), with a causal mask the layer builds itself (recognise/builtin_causal,
also when the forward takes the padding part alone), and a decoder whose self-attention is named
for its mask (`masked_attention`) beside a plain `attention` (reading/trees.MASKED_SELF): right
code matches, saying how its parts were handed over; the planted twins stay mismatches."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("broadcast_padding_parts.py")


@pytest.mark.parametrize("comp,name,axes", [
    ("encoder_layer", "BroadcastPadEncoderLayer", "(batch, 1, 1, T)"),
    ("encoder_layer", "UnsqueezedPadEncoderLayer", "(batch, 1, T)"),
    ("decoder_layer", "MaskNamedDecoderLayer", "(batch, 1, 1, S)"),
])
def test_broadcastable_padding_parts_are_handed_over_as_taken(comp, name, axes):
    res = check(comp, f"{FILE}:{name}", examples=15)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "broadcastable masks" in text and axes in text, text
    assert res.examples_run >= 15, text


def test_a_decoder_self_attention_named_for_its_mask_is_the_self_attention():
    res = check("decoder_layer", f"{FILE}:MaskNamedDecoderLayer", examples=6)
    assert any(m.startswith("self_attn.q_proj.weight <- masked_attention.") for m in res.mapping), \
        res.mapping
    assert any(m.startswith("cross_attn.q_proj.weight <- attention.") for m in res.mapping), \
        res.mapping
    assert "only causal self_mask masks are drawn" in render_text(res)


@pytest.mark.parametrize("comp,name", [("encoder_layer", "BroadcastPadEncoderLayerBUG"),
                                       ("decoder_layer", "MaskNamedDecoderLayerBUG")])
def test_planted_bugs_behind_broadcastable_parts_are_mismatches(comp, name):
    res = check(comp, f"{FILE}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
