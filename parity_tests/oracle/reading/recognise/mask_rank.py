"""Recogniser: layers that add the head axis to their mask themselves (`mask.unsqueeze(1)`, the
Annotated Transformer's MultiHeadedAttention) and so want (batch, Tq, Tk) masks, not the oracle's
default (batch, 1, Tq, Tk): a 4-axis mask then broadcasts into a wrong-shaped output.

Found by a probe (only while --mask-rank is the default 4): a call with a padding mask of 4 axes
raises or returns the wrong shape, the same call with 3 axes returns the input's shape. Then masks
are handed over with 3 axes (as --mask-rank 3 would), and the report says so.

Before that, while the mask options are the defaults: code that handles only float masks added to
the scores (a boolean mask of 4 axes raises in its own conversion, while a 3-axis boolean one is
silently added as 0 / 1) is not a 3-axis layer. When the same 4-axis mask given additive (0 / -inf
floats) runs and hides the padded key (the other positions' outputs do not move when its input
changes), masks are handed over additive (as recognise/additive_mask does for layers whose boolean
masks leak) and the rank is left at 4.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out

COMPONENTS = ("mha", "encoder_layer", "decoder_layer")


def _shape(value):
    out = value[0] if isinstance(value, (tuple, list)) and value else value
    return tuple(getattr(out, "shape", ()) or ())


def probe(adapter) -> None:
    if adapter.comp.name not in COMPONENTS or adapter.opts.mask_rank != 4 or \
            adapter.mode not in ("class", "instance") or getattr(adapter, "torch_mha_mask", False):
        return
    binding = getattr(adapter, "binding", None)
    if binding is None or adapter.caps.valid_lens or adapter.caps.list_input or \
            all(m.name in binding.unbound for m in adapter.comp.masks):
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    from ..slots import convert_mask
    m = adapter.finish_module(obj)
    fn = adapter.call_target(m)
    if adapter.hooks is not None and adapter.hooks.call is not None:
        return
    D, dtype = adapter.probe_hyper()["d_model"], adapter.opts.dtype
    rng = np.random.default_rng(5)
    x_np = rng.standard_normal((2, 3, D)).astype(dtype)
    x, x_np = adapter.ops.from_np(x_np), x_np.copy()
    x_np[1, -1] += 3.0 * rng.standard_normal(D)                 # the padded key's input changes
    x2 = adapter.ops.from_np(x_np)
    keep = np.ones((2, 1, 3, 3), dtype=bool)
    keep[1, :, :, -1] = False                                  # batch 1: last key is padding

    def attempt(opts, inp=x):
        vals = {s.name: inp for s in adapter.comp.inputs}
        vals.update({"x": inp, "query": inp, "key": inp, "value": inp, "key_value": inp, "memory": inp})
        vals.update({mk.name: adapter.ops.from_np(convert_mask(keep, opts, dtype))
                     for mk in adapter.comp.masks})
        res = run_limited(lambda: binding.call(fn, vals), 10.0)
        ok = isinstance(res, Finished) and _shape(res.value) == (2, 3, D)
        return array_out(res.value) if ok else None

    additive = replace(adapter.opts, mask_convention="additive", mask_dtype="float")
    try:
        if attempt(adapter.opts) is not None:
            return
        if adapter.opts.mask_convention == "keep" and adapter.opts.mask_dtype == "bool" and \
                _hides(attempt, additive, x2):
            adapter.opts.mask_convention, adapter.opts.mask_dtype = "additive", "float"
            adapter.notes.append("the candidate takes its mask as a float added to the scores: a "
                                 "(batch, 1, Tq, Tk) 0/1 boolean mask failed, an additive float "
                                 "one of the same shape (0 / -inf) ran and hid its key; masks "
                                 "handed over additive, as --mask-convention additive "
                                 "--mask-dtype float")
            return
        if attempt(replace(adapter.opts, mask_rank=3)) is None:
            return
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    adapter.opts.mask_rank = 3
    adapter.notes.append("the candidate adds the head axis to its mask itself (a (batch, 1, Tq, "
                         "Tk) mask gave a wrong shape, (batch, Tq, Tk) the right one): masks "
                         "handed over with 3 axes, as --mask-rank 3")


def _hides(attempt, opts, x2) -> bool:
    """Whether the call under `opts` runs and keeps batch 1's padded last key out of its other
    positions' outputs (they do not move when that key's input changes, x2)."""
    a, b = attempt(opts), attempt(opts, x2)
    if a is None or b is None or not np.all(np.isfinite(a)):
        return False
    return bool(np.abs(a[1, :-1] - b[1, :-1]).max() <= 1e-6 * max(1.0, float(np.abs(a).max())))
