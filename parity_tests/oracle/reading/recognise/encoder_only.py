"""Recogniser: an encoder-only (BERT-style) model checked as `model`, the paper's encoder-decoder.
Its forward takes two inputs (token ids and segment ids), so binding gets as far as the weights,
where every decoder weight of the reference stays unplaced and the generic message listed dozens
of them and asked for `--map`. When every reference weight under `decoder.` is unplaced and no
candidate parameter's name holds a decoder or cross-attention word, the message now begins with
the likely cause and the components that do compare its parts; the verdict stays an interface
error."""
from __future__ import annotations

DECODER_WORDS = ("decoder", "dec", "cross", "src_attn", "enc_dec", "encdec", "memory", "tgt", "trg",
                 "target")

HINT = ("the candidate looks encoder-only (BERT-style): no parameter of it could be the decoder's "
        "(every decoder weight of the reference is unplaced, and none of its names holds a decoder "
        "or cross-attention word). The model component is the paper's encoder-decoder Transformer, "
        "so the model as a whole cannot be compared with it; check its parts instead: each block "
        "as encoder_layer, its attention as mha, its feed-forward as ffn, its norms as layernorm. ")


def _words(name: str) -> set[str]:
    return {w for part in name.lower().split(".") for w in part.split("_")} | \
        set(name.lower().split("."))


def message(kind: str, space, missing: list, ref_shapes: dict) -> str | None:
    """The likely cause to put before the generic message, or None (see the module docstring)."""
    if kind != "model":
        return None
    decoder = [r for r in ref_shapes if r.startswith("decoder.") and r.endswith(".weight")]
    if not decoder or not set(decoder) <= set(missing):
        return None
    if any(_words(n) & set(DECODER_WORDS) for n in space.names):
        return None
    return HINT
