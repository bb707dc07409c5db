"""Recogniser: a decoder-only (GPT-style) layer checked as `decoder_layer`.

The decoder_layer component is the paper's decoder layer: masked self-attention, then
cross-attention to the encoder's output (memory), then the feed-forward. A layer whose forward
has no place for memory (BioGpt's, GPT-2's block, a "decoder" from a GPT tutorial) has no
cross-attention to compare, so the check cannot go on as that component. The interface error
then says why, and what does compare it: such a layer is the encoder layer run under a causal
mask, and `encoder_layer` draws causal masks (and padding, and none) for it. A library layer that
switches its cross-attention on from the config is built with it on before this (configs), so it
never reaches here.

The same for a whole decoder-only language model (a GPT: `forward(idx, targets=None)`) checked as
`model`, the paper's encoder-decoder Transformer, whose forward has no place for the target
sequence: the error says what the model is and which components still compare its parts.
"""
from __future__ import annotations

HINT = ("its forward takes no memory (the encoder output a decoder layer's cross-attention reads): "
        "a decoder-only (GPT-style) layer, self-attention and feed-forward alone. The decoder_layer "
        "component includes cross-attention, so nothing here can be compared with it; check the "
        "layer as encoder_layer instead (a decoder-only layer is an encoder layer under a causal "
        "mask; encoder_layer draws causal masks as well as padding)")


MODEL_HINT = ("its forward takes one token sequence and no target (tgt): a decoder-only (GPT-style) "
              "language model. The model component is the paper's encoder-decoder Transformer "
              "(forward(src, tgt, ...)), so the model as a whole cannot be compared with it; check "
              "its parts instead: each block as encoder_layer (a decoder-only block is an encoder "
              "layer under a causal mask), its attention as mha, its feed-forward as ffn, its "
              "norms as layernorm")


def decoder_only(adapter, err: Exception) -> Exception:
    """The interface error to raise: err itself, or for a decoder layer with no place for memory
    (a whole model with no place for tgt) the same error with the reason and what to check."""
    text = str(err)
    missing = text.rsplit("no place for", 1)[1] if "no place for" in text else ""
    if adapter.comp.name == "decoder_layer" and "memory" in missing:
        return type(err)(f"{text}: {HINT}")
    if adapter.comp.name == "model" and "tgt" in missing and "src" not in missing:
        return type(err)(f"{text}: {MODEL_HINT}")
    return err
