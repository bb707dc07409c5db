"""Recogniser: attention that ADDS its mask to the scores (Hugging Face layers: `scores +
attention_mask`, the mask 0 where a key is seen and a large negative number where it is hidden),
handed the oracle's default 0/1 boolean keep-mask: hidden keys stay visible (a boolean added to the
scores shifts them by 1 at most), and a correct layer was called MISMATCH.

Found by behaviour, in the worker, without the reference: a padding mask hides the last key of
batch 1; that position's input is then changed. Under a mask the candidate reads correctly, the
outputs of the other positions of batch 1 do not move. When they move under the chosen convention
and stay put under an additive float mask (0 / -inf), masks are handed over additive, and the
report says so. Only additive is tried (a different representation of the same mask): a layer that
reads 1 as "hidden" is a flipped convention, which the diagnosis names instead. Only while the mask
options are the defaults (keep, bool).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out

COMPONENTS = ("mha", "encoder_layer")


def probe(adapter) -> None:
    opts = adapter.opts
    if adapter.comp.name not in COMPONENTS or (opts.mask_convention, opts.mask_dtype) != \
            ("keep", "bool") or adapter.mode not in ("class", "instance") or \
            getattr(adapter, "torch_mha_mask", False):
        return
    binding = getattr(adapter, "binding", None)
    mask = adapter.comp.masks[0]
    if binding is None or mask.name in binding.unbound or adapter.caps.valid_lens or \
            adapter.caps.list_input or (adapter.hooks is not None
                                              and adapter.hooks.call is not None):
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    from ..slots import convert_mask
    m = adapter.finish_module(obj)
    fn = adapter.call_target(m)
    D, dtype = adapter.probe_hyper()["d_model"], opts.dtype
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 4, D))
    x2 = x.copy()
    x2[1, -1] += 3.0 * rng.standard_normal(D)                  # the hidden key's input changes
    keep = np.ones((2, 1, 4, 4), dtype=bool)
    keep[1, :, :, -1] = False

    def out(inp, o):
        t = adapter.ops.from_np(inp.astype(dtype))
        vals = {s.name: t for s in adapter.comp.inputs}
        vals.update({"x": t, "query": t, "key": t, "value": t, "key_value": t})
        vals[mask.name] = adapter.ops.from_np(convert_mask(keep, o, dtype))
        res = run_limited(lambda: binding.call(fn, vals), 10.0)
        return array_out(res.value) if isinstance(res, Finished) else None

    def leaks(o):
        a, b = out(x, o), out(x2, o)
        if a is None or b is None or a.shape != x.shape or not np.all(np.isfinite(a)):
            return None
        return bool(np.abs(a[1, :-1] - b[1, :-1]).max() > 1e-6 * max(1.0, np.abs(a).max()))

    additive = replace(opts, mask_convention="additive", mask_dtype="float")
    try:
        if leaks(opts) is not True or leaks(additive) is not False:
            return
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    adapter.opts.mask_convention, adapter.opts.mask_dtype = "additive", "float"
    adapter.notes.append("the candidate adds its mask to the scores: under a 0/1 boolean mask a "
                         "hidden key still changed the other positions' outputs, under an additive "
                         "float mask (0 / -inf) it did not; masks handed over additive, as "
                         "--mask-convention additive --mask-dtype float")
