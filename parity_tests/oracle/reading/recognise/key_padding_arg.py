"""Recogniser: a mask argument that is a key padding, (batch, Tk), under a general name
(`forward(query, key, value, mask)` whose docstring says "mask: (batch, keys)", and which does
`mask[:, None, None, :]` itself). The oracle's (batch, 1, Tq, Tk) mask then raises or returns the
wrong shape, and right code was RAISED.

Found by a probe (only while the mask options are the defaults and undeclared, after
recognise/mask_rank found no rank that runs): batch 1's last key is padded and its input changed;
the call with that padding as (batch, Tk) runs, returns the input's shape, and batch 1's other
positions do not move, under True = seen or (tried second) True = padding. Then every mask is
handed over as its key padding (the last query's row: every row of a padding mask), only padding
masks (and none) are drawn, the others are listed as not compared, and the report says so. For
multi-head attention and encoder layers; every quantity is still compared with the reference.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out

COMPONENTS = ("mha", "encoder_layer")
KINDS = ("none", "padding")


def as_call_mask(adapter, mask):
    """A converted (B, Hm, Tq, Tk) mask as the candidate takes it: (B, Tk) for a key padding
    argument (this recogniser), unchanged otherwise."""
    if mask is None or not getattr(adapter, "key_padding_arg", False):
        return mask
    return np.ascontiguousarray(mask[:, 0, -1, :])


def probe(adapter) -> None:
    opts, b = adapter.opts, getattr(adapter, "binding", None)
    if adapter.comp.name not in COMPONENTS or b is None or adapter.mode not in ("class", "instance") \
            or adapter.hooks is not None or (opts.mask_convention, opts.mask_dtype, opts.mask_rank) != \
            ("keep", "bool", 4) or set(getattr(opts, "declared", ()) or ()) & \
            {"mask_convention", "mask_rank"}:
        return
    if getattr(adapter, "torch_mha_mask", False) or getattr(adapter, "heads_merged_mask", False) or \
            adapter.caps.valid_lens or adapter.caps.list_input:
        return
    mask = adapter.comp.masks[0]
    if mask.name in b.unbound or mask.name in (b.guessed or {}).values() or \
            "padding" not in adapter.caps.mask_kinds.get(mask.name, mask.kinds):
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    from ..slots import convert_mask
    m = adapter.finish_module(obj)
    fn = m if adapter.framework == "torch" else (getattr(m, "forward", None) or m)
    D, dtype = adapter.probe_hyper()["d_model"], opts.dtype
    rng = np.random.default_rng(17)
    x = rng.standard_normal((2, 3, D))
    x2 = x.copy()
    x2[1, -1] += 3.0 * rng.standard_normal(D)                  # the padded key's input changes
    keep = np.ones((2, 1, 3, 3), dtype=bool)
    keep[1, :, :, -1] = False                                  # batch 1: last key is padding

    def out(inp, convention, padding):
        t = adapter.ops.from_np(inp.astype(dtype))
        given = convert_mask(keep, replace(opts, mask_convention=convention), dtype)
        vals = {s.name: t for s in adapter.comp.inputs}
        vals.update({"x": t, "query": t, "key": t, "value": t, "key_value": t,
                     mask.name: adapter.ops.from_np(given[:, 0, -1, :] if padding else given)})
        res = run_limited(lambda: b.call(fn, vals), 10.0)
        got = array_out(res.value) if isinstance(res, Finished) else None
        return got if got is not None and got.shape == x.shape and np.all(np.isfinite(got)) else None

    def hides(convention) -> bool:
        a, c = out(x, convention, True), out(x2, convention, True)
        return a is not None and c is not None and \
            np.abs(a[1, :-1] - c[1, :-1]).max() <= 1e-6 * max(1.0, float(np.abs(a).max()))

    try:
        if out(x, "keep", False) is not None:
            return                           # the (batch, 1, Tq, Tk) mask runs: not this style
        convention = next((c for c in ("keep", "drop") if hides(c)), None)
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    if convention is None:
        return
    adapter.key_padding_arg = True
    opts.mask_convention = convention
    kinds = adapter.caps.mask_kinds.get(mask.name, mask.kinds)
    adapter.caps.mask_kinds[mask.name] = tuple(k for k in kinds if k in KINDS)
    flipped = " True where a key is padding (as --mask-convention drop)," if convention == "drop" \
        else ""
    adapter.notes.append(f"the candidate's {b.arg_of.get(mask.name, mask.name)!r} is a key padding, "
                         f"(batch, Tk):{flipped} a (batch, 1, Tq, Tk) mask raised or gave a wrong "
                         f"shape, (batch, Tk) ran and hid the padded key; only padding masks drawn")
