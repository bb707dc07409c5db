"""Recogniser: attention that folds the heads into the batch axis and wants its mask already spread
over that axis, (batch*heads, Tq, Tk) with row b*heads + h (torch.nn.MultiheadAttention's 3-D mask
layout; code that merges batch and heads before `torch.bmm`). The oracle's (batch, 1, Tq, Tk) mask
and a (batch, Tq, Tk) one both raise there or give a wrong shape.

Found by a probe (default --mask-rank, no adapter call hook): both of those fail, the same call with
the mask spread over the merged axis, in the chosen convention, returns the input's shape, and
under it a padded key of the second sequence changes none of that sequence's other outputs (so the
rows are batch-major, not head-major), and a NumPy module's own backward(dout) runs after that
call (one (Tq, Tk) mask for the batch, `mask[None]`, broadcasts the merged mask in a forward and
fails in its backward; mask_forms hands it its own form). Then every mask is handed over so, and
the report says so.
Not when the instructor fixed the rank (Options.declared): masks are handed over as declared.
"""
from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out
from .torch_mha_mask import heads_merged

COMPONENTS = ("mha", "encoder_layer", "decoder_layer")


def applies(adapter) -> bool:
    if adapter.comp.name not in COMPONENTS or adapter.opts.mask_rank != 4 or \
            adapter.mode not in ("class", "instance") or getattr(adapter, "torch_mha_mask", False):
        return False
    if "mask_rank" in tuple(getattr(adapter.opts, "declared", ()) or ()):
        return False                    # the instructor fixed the rank: masks handed over so
    binding = getattr(adapter, "binding", None)
    if binding is None or adapter.caps.valid_lens or adapter.caps.list_input or \
            all(m.name in binding.unbound for m in adapter.comp.masks):
        return False
    if adapter.hooks is not None and adapter.hooks.call is not None:
        return False
    return (adapter.probe if adapter.mode == "class" else adapter.obj) is not None


def probe(adapter) -> None:
    if not applies(adapter):
        return
    from ..slots import convert_mask
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    m = adapter.finish_module(obj)
    fn = adapter.call_target(m)
    hyper = adapter.probe_hyper()
    D, H, dtype = hyper["d_model"], hyper["num_heads"], adapter.opts.dtype
    if H < 2:
        return                          # one head: (batch*heads, Tq, Tk) is the 3-axis mask
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 4, D))
    x2 = x.copy()
    x2[1, -1] += 3.0 * rng.standard_normal(D)                  # the hidden key's input changes
    keep = np.ones((2, 1, 4, 4), dtype=bool)
    keep[1, :, :, -1] = False                                  # batch 1: last key is padding

    def out(inp, mask):
        t = adapter.ops.from_np(inp.astype(dtype))
        vals = {s.name: t for s in adapter.comp.inputs}
        vals.update({"x": t, "query": t, "key": t, "value": t, "key_value": t, "memory": t})
        vals.update({mk.name: adapter.ops.from_np(mask) for mk in adapter.comp.masks})
        res = run_limited(lambda: binding.call(fn, vals), 10.0)
        return array_out(res.value) if isinstance(res, Finished) else None

    binding = adapter.binding
    given = convert_mask(keep, adapter.opts, dtype)
    merged = heads_merged(given, H)
    try:
        for rank in (4, 3):
            got = out(x, convert_mask(keep, replace(adapter.opts, mask_rank=rank), dtype))
            if got is not None and got.shape == x.shape:
                return                  # the oracle's own forms work
        a, b = out(x, merged), out(x2, merged)
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    if a is None or b is None or a.shape != x.shape or not np.all(np.isfinite(a)) or \
            np.abs(a[1, :-1] - b[1, :-1]).max() > 1e-6 * max(1.0, np.abs(a).max()):
        return
    if not _backward_runs(adapter, m, b):
        return                          # a forward that broadcasts it, a backward that cannot
    adapter.heads_merged_mask = True
    adapter.notes.append("the candidate wants its mask spread over the merged batch*heads axis (a "
                         "(batch, 1, Tq, Tk) and a (batch, Tq, Tk) mask failed there): masks "
                         "handed over as (batch*heads, Tq, Tk), row b*heads + h, in the chosen "
                         "convention")


def _backward_runs(adapter, m, out) -> bool:
    """Whether a NumPy module's own backward(dout) runs after the merged-mask forward that gave
    `out`: code taking one (Tq, Tk) mask for the batch (`mask[None]` over (batch*heads, Tq, Tk)
    scores) broadcasts the merged mask to 4 axes in its forward and fails in its backward, where
    mask_forms' shared form serves it. True where there is no such backward to run."""
    backward = getattr(m, "backward", None)
    if adapter.framework != "numpy" or not callable(backward):
        return True
    try:
        params = [p for p in inspect.signature(backward).parameters.values() if p.default is p.empty
                  and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return True
    if len(params) != 1:
        return True
    dout = adapter.ops.from_np(np.ones_like(out))
    return isinstance(run_limited(lambda: backward(dout), 10.0), Finished)
