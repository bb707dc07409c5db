"""Recogniser: a whole model whose masks are key paddings of shape (batch, length), as Hugging
Face's `attention_mask` is (`forward(input_sequence, input_attention_mask, output_sequence,
output_attention_mask)`, 1 = a real token), the future masked by the model itself. The oracle's
(batch, 1, 1, S) and (batch, 1, T, T) masks raised or gave a wrong shape, and right code was RAISED.

Found by a probe on the model built with small sizes (only while the mask options are the
defaults and undeclared): the oracle's masks do not run, and key paddings do, returning (batch, T,
vocabulary), and hiding batch 1's last source token under True = seen (or, tried second, True =
hidden) keeps batch 1's output still when that token changes. Then both masks are handed over as
key paddings (the source mask's only row, the target mask's last row: the padding without the
causal part) in that convention, and the report says so. What a model computes with them is
compared as before: a model that does not mask the future itself differs from the reference.
When key paddings run but hide the token under neither convention (a model applying its padding
wrongly, `scores *= ~mask`), they are still handed over so, True = seen, and the report says that
they hid nothing: the comparison shows what the model does with them (before, the oracle's masks
were handed over and the model RAISED on their shape, its real difference never reached).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out
from .mask_forms import cut, masks_undecided


def probe(adapter) -> None:
    opts, b = adapter.opts, getattr(adapter, "binding", None)
    if not masks_undecided(adapter, ("model",)):
        return
    masks = adapter.comp.masks
    if any(mk.name in b.unbound for mk in masks):
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    from ..slots import convert_mask
    m = adapter.finish_module(obj)
    fn = adapter.call_target(m)
    h = adapter.probe_hyper()
    B, S, T, V = 2, 3, 3, h["tgt_vocab"]
    rng = np.random.default_rng(19)
    src = rng.integers(1, h["src_vocab"], (B, S))               # no padding id among them
    tgt = rng.integers(1, V, (B, T))
    src2 = src.copy()
    src2[1, -1] = 1 + src[1, -1] % (h["src_vocab"] - 1)         # batch 1's last source token changes
    causal = np.tril(np.ones((T, T), dtype=bool))[None, None]

    def out(source, convention, form, hide):
        src_keep = np.ones((B, 1, 1, S), dtype=bool)
        if hide:
            src_keep[1, :, :, -1] = False
        keeps = {masks[0].name: src_keep, masks[1].name: np.broadcast_to(causal, (B, 1, T, T))}
        vals = {"src": adapter.ops.from_np(source), "tgt": adapter.ops.from_np(tgt)}   # int64 ids
        for name, keep in keeps.items():
            given = convert_mask(np.array(keep), replace(opts, mask_convention=convention), opts.dtype)
            vals[name] = adapter.ops.from_np(cut(given, form))
        res = run_limited(lambda: b.call(fn, vals), 10.0)
        got = array_out(res.value) if isinstance(res, Finished) else None
        return got if got is not None and got.shape == (B, T, V) and np.all(np.isfinite(got)) else None

    def hides(convention) -> bool:
        a, c = out(src, convention, "key_padding", True), out(src2, convention, "key_padding", True)
        return a is not None and c is not None and \
            np.abs(a[1] - c[1]).max() <= 1e-6 * max(1.0, float(np.abs(a).max()))

    try:
        if out(src, "keep", None, False) is not None:
            return                          # the oracle's masks run: not this style
        convention = next((c for c in ("keep", "drop") if hides(c)), None)
        runs = convention is not None or out(src, "keep", "key_padding", True) is not None
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    if not runs:
        return
    adapter.mask_form = "key_padding"
    opts.mask_convention = convention or "keep"
    names = ", ".join(repr(b.arg_of.get(mk.name, mk.name)) for mk in masks)
    flipped = " True where a token is padding (as --mask-convention drop)," if convention == "drop" else ""
    what = "these ran and hid the padded source token" if convention else \
        "these ran but hid the padded source token under neither convention (handed over True = seen)"
    adapter.notes.append(f"the model's {names} are taken as key paddings (batch, length):{flipped} "
                         f"(batch, 1, 1, S) and (batch, 1, T, T) masks raised or gave a wrong shape, "
                         f"{what}; the future is the model's own to mask")
