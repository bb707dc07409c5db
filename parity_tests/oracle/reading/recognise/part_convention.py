"""Recogniser: the convention of a key padding taken as a part of the mask, by its name
(`encoder_padding_mask`, `src_key_padding_mask`): such arguments are as often True where a key is
padding (torch's key_padding_mask, fairseq) as True where it is seen, and the name does not say
which. Found by behaviour, in the worker, without the reference, as recognise/additive_mask does:
the padding part hides the last key of batch 1, whose input is then changed; under the convention
the candidate reads, the outputs of batch 1's other positions do not move (and none is NaN, as when
every key of a row is hidden). When they move under the default (True = seen) and stay put under
the flipped one (True = padding), the parts are handed over
flipped and the report says so. Only for layers whose every mask is taken in parts, only while the
mask options are the defaults; every quantity is still compared with the reference."""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out
from .mask_parts import COMPONENTS


def probe(adapter) -> None:
    opts, b = adapter.opts, getattr(adapter, "binding", None)
    if adapter.comp.name not in COMPONENTS or b is None or (opts.mask_convention, opts.mask_dtype) != \
            ("keep", "bool") or adapter.mode not in ("class", "instance") or adapter.hooks is not None:
        return
    kinds = [k for k in b.guessed.values() if k.split(":")[0] in ("padding_mask", "causal_mask")]
    if not any(k.startswith("padding_mask") for k in kinds) or any(m.name not in b.unbound for m in adapter.comp.masks):
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    from ..slots import convert_mask
    fn = adapter.finish_module(obj)
    D, dtype = adapter.probe_hyper()["d_model"], opts.dtype
    rng = np.random.default_rng(9)
    x, mem = rng.standard_normal((2, 4, D)), rng.standard_normal((2, 4, D))
    x2 = x.copy()
    x2[1, -1] += 3.0 * rng.standard_normal(D)                  # the hidden key's input changes
    keep = np.ones((2, 1, 4, 4), dtype=bool)
    keep[1, :, :, -1] = False
    tf = adapter.caps.time_first

    def out(inp):
        lay = (lambda a: a.swapaxes(0, 1)) if tf else (lambda a: a)
        t = adapter.ops.from_np(lay(inp).astype(dtype))
        vals = {"x": t, "query": t, "key": t, "value": t, "memory": adapter.ops.from_np(lay(mem).astype(dtype))}
        vals.update({m.name: adapter.ops.from_np(convert_mask(keep, opts, dtype)) for m in adapter.comp.masks})
        res = run_limited(lambda: b.call(fn, vals), 10.0)
        got = array_out(res.value) if isinstance(res, Finished) else None
        return lay(got) if got is not None and got.ndim == 3 else got

    def leaks(convention):
        opts.mask_convention = convention          # the parts are cut and handed in this one
        try:
            a, c = out(x), out(x2)
        finally:
            opts.mask_convention = "keep"
        if a is None or c is None or a.shape != x.shape:
            return None
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(c))):
            return True                            # every key of a row hidden: read wrongly
        return bool(np.abs(a[1, :-1] - c[1, :-1]).max() > 1e-6 * max(1.0, np.abs(a).max()))

    try:
        if leaks("keep") is not True or leaks("drop") is not False:
            return
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    opts.mask_convention = "drop"
    adapter.notes.append("the candidate's key padding argument is True where a key is padding: "
                         "under True = seen a hidden key still changed the other positions' outputs, "
                         "under True = padding it did not; its mask parts handed over so, as "
                         "--mask-convention drop")
