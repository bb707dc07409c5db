"""Recogniser: a decoder-only (GPT-style) layer checked as `decoder_layer`.

The decoder_layer component is the paper's decoder layer: masked self-attention, then
cross-attention to the encoder's output (memory), then the feed-forward. A layer whose forward
has no place for memory (BioGpt's, GPT-2's block, a "decoder" from a GPT tutorial) has no
cross-attention to compare, so the check cannot go on as that component. The interface error
then says why, and what does compare it: such a layer is the encoder layer run under a causal
mask, and `encoder_layer` draws causal masks (and padding, and none) for it. A library layer that
switches its cross-attention on from the config is built with it on before this (configs), so it
never reaches here.
"""
from __future__ import annotations

HINT = ("its forward takes no memory (the encoder output a decoder layer's cross-attention reads): "
        "a decoder-only (GPT-style) layer, self-attention and feed-forward alone. The decoder_layer "
        "component includes cross-attention, so nothing here can be compared with it; check the "
        "layer as encoder_layer instead (a decoder-only layer is an encoder layer under a causal "
        "mask; encoder_layer draws causal masks as well as padding)")


def decoder_only(adapter, err: Exception) -> Exception:
    """The interface error to raise: err itself, or for a decoder layer with no place for memory
    the same error with the reason and the component to use."""
    text = str(err)
    if adapter.comp.name != "decoder_layer" or "no place for" not in text or "memory" not in \
            text.rsplit("no place for", 1)[1]:
        return err
    return type(err)(f"{text}: {HINT}")
