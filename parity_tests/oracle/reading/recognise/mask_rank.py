"""Recogniser: layers that add the head axis to their mask themselves (`mask.unsqueeze(1)`, the
Annotated Transformer's MultiHeadedAttention) and so want (batch, Tq, Tk) masks, not the oracle's
default (batch, 1, Tq, Tk): a 4-axis mask then broadcasts into a wrong-shaped output.

Found by a probe (only while --mask-rank is the default 4): a call with a padding mask of 4 axes
raises or returns the wrong shape, the same call with 3 axes returns the input's shape. Then masks
are handed over with 3 axes (as --mask-rank 3 would), and the report says so.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited

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
    fn = m if adapter.framework == "torch" else (getattr(m, "forward", None) or m)
    if adapter.hooks is not None and adapter.hooks.call is not None:
        return
    D, dtype = adapter.probe_hyper()["d_model"], adapter.opts.dtype
    x = adapter.ops.from_np(np.random.default_rng(5).standard_normal((2, 3, D)).astype(dtype))
    keep = np.ones((2, 1, 3, 3), dtype=bool)
    keep[1, :, :, -1] = False                                  # batch 1: last key is padding

    def attempt(opts):
        vals = {s.name: x for s in adapter.comp.inputs}
        vals.update({"x": x, "query": x, "key": x, "value": x, "key_value": x, "memory": x})
        vals.update({mk.name: adapter.ops.from_np(convert_mask(keep, opts, dtype))
                     for mk in adapter.comp.masks})
        res = run_limited(lambda: binding.call(fn, vals), 10.0)
        return isinstance(res, Finished) and _shape(res.value) == (2, 3, D)

    try:
        if attempt(adapter.opts) or not attempt(replace(adapter.opts, mask_rank=3)):
            return
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    adapter.opts.mask_rank = 3
    adapter.notes.append("the candidate adds the head axis to its mask itself (a (batch, 1, Tq, "
                         "Tk) mask gave a wrong shape, (batch, Tq, Tk) the right one): masks "
                         "handed over with 3 axes, as --mask-rank 3")
