"""Recogniser: layers that take their masks in parts, named for what each part is
(`forward(tgt, memory, tgt_pad_mask, tgt_autoregressive_mask, memory_pad_mask)`): the key padding
of the target, (batch, T); the causal mask, (T, T); the key padding of the memory, (batch, S). The
names are read by `name_words.mask_part` (required arguments no source matched); each part is cut
from the oracle's mask of the same example (its keep mask is the causal part AND the key padding),
in the chosen convention and dtype, and an example drawn without a mask gives all-attend parts.
Masks no such pair of parts can say are not drawn, and the report lists them as not compared: random
ones, and causal-with-padding ones (the oracle keeps the diagonal of a padded query's row so that no
row is empty, which a padding and a causal part cannot say). For encoder and decoder layers."""
from __future__ import annotations

import numpy as np

from ..signatures import InterfaceError, PerCall
from .part_layout import LAYOUTS, shaped

COMPONENTS = ("encoder_layer", "decoder_layer")
SAID = ("none", "padding", "causal")
"""The mask kinds a padding part and a causal part can say."""
WHAT = {"padding_mask": "the key padding of {src}, (batch, {k})", "causal_mask": "the causal part of {src}, "
        "({q}, {k})"}


def _sources(comp) -> dict[str, str]:
    self_src = comp.masks[0].name
    return {"self": self_src, "memory": comp.masks[1].name if len(comp.masks) > 1 else self_src}


def _keep(adapter, m, shape) -> np.ndarray:
    """The keep mask (B, Tq, Tk) behind a mask handed in the candidate's convention (None: all)."""
    if m is None:
        return np.ones(shape, dtype=bool)
    a = m.detach().cpu().numpy() if hasattr(m, "detach") else np.asarray(m)
    conv = adapter.opts.mask_convention
    keep = (a == 0) if conv == "additive" else (a.astype(bool) if conv == "keep" else ~a.astype(bool))
    return keep.reshape((keep.shape[0],) + keep.shape[-2:]) if keep.ndim == 4 else keep


def _part(adapter, values: dict, src: str, memory: bool, kind: str):
    from ..slots import convert_mask
    b, t = (1, 0) if adapter.caps.time_first else (0, 1)       # (T, B, d) layers (recognise/time_first)
    B, T = int(values["x"].shape[b]), int(values["x"].shape[t])
    Tk = int(values["memory"].shape[t]) if memory and "memory" in values else T
    keep = _keep(adapter, values.get(src), (B, T, Tk))
    pad = keep[:, -1, :]                                        # the last query sees every unpadded key
    causal = next((c for c in (np.ones((T, Tk), bool), np.tril(np.ones((T, Tk), bool)))
                   if np.array_equal(keep, c[None] & pad[:, None, :])), None)
    if causal is None:
        raise InterfaceError(f"{src}: this mask is no causal mask and key padding, the parts the "
                             f"candidate's forward takes")
    out = shaped(pad, getattr(adapter, "part_layout", None)) if kind == "padding_mask" else causal
    return adapter.ops.from_np(convert_mask(out, adapter.opts, adapter.opts.dtype))


def meanings(adapter) -> dict:
    """{meaning: PerCall} for bind's `meanings` (see name_words.mask_part)."""
    if adapter.comp.name not in COMPONENTS:
        return {}
    src = _sources(adapter.comp)
    out = {}
    for which in ("self", "memory"):
        for kind in ("padding_mask", "causal_mask"):
            if kind == "causal_mask" and which == "memory":
                continue
            mem = which == "memory" and adapter.comp.name == "decoder_layer"
            text = WHAT[kind].format(src=src[which], q="T", k="S" if mem else "T")
            if kind == "padding_mask":          # the axes part_layout chose, when not (batch, k)
                k = "S" if mem else "T"
                text = text.replace(f"(batch, {k})", LAYOUTS[getattr(adapter, "part_layout", None)
                                                             or "flat"].format(k=k))
            out[f"{kind}:{which}"] = PerCall(
                lambda v, s=src[which], m=mem, k=kind: _part(adapter, v, s, m, k), text)
    return out


def probe(adapter) -> None:
    """Masks given in parts: drawn only as what the parts can say, and the report says so."""
    b = getattr(adapter, "binding", None)
    if b is None or adapter.comp.name not in COMPONENTS:
        return
    parts = {a: k for a, k in b.guessed.items() if k.split(":")[0] in WHAT}
    if not parts:
        return
    src = _sources(adapter.comp)
    said: dict[str, set] = {}                 # per mask: the kinds its parts can say
    for k in parts.values():
        kind, which = k.split(":")
        said.setdefault(src[which], {"none"}).add("padding" if kind == "padding_mask" else "causal")
    for m in adapter.comp.masks:
        if m.name in said:
            kinds = tuple(k for k in m.kinds if k in SAID and k in said[m.name])
            if adapter.caps.mask_kinds.get(m.name) == ("causal",) and "causal" not in said[m.name]:
                kinds = ("causal",)      # the layer masks the future itself (builtin_causal)
            adapter.caps.mask_kinds[m.name] = kinds
            adapter.notes[:] = [n for n in adapter.notes if n != f"forward has no {m.name!r} argument: "
                                f"drew no {m.name}"]
    adapter.notes.append("forward takes its masks in parts, named for what they are: "
                         + ", ".join(f"{a} = {b.constants[a]!r}" for a in parts)
                         + "; masks no such parts can say (random, causal with padding) not drawn")
