"""Recogniser: attention that masks future positions itself (minGPT / nanoGPT `CausalSelfAttention`
with a registered `tril` buffer, `F.scaled_dot_product_attention(..., is_causal=True)`, a decoder
layer building its own look-ahead mask) and so takes no mask argument.

Found by a probe, not by names: with the first mask unbound, the candidate is called on a random
sequence, then on the same sequence with its LAST position changed and with its FIRST position
changed. Causal code keeps every earlier output when the last input changes, while later outputs do
follow the first input (it does mix positions). Then only causal masks are drawn for that mask, and
the report says so; without the probe such code would be compared with unmasked attention and fail.
Not probed where a mask-named switch was passed False (`forward(x, mask=True)`, mask_switch): the
code was told not to mask, so a future hidden anyway is compared, and fails, as a wrong answer.

The probe runs on drawn, finite weights written through the candidate's weight slots (as a scored
run writes them), not on what its constructor left there: a NumPy class that makes its weights
with `np.empty` / `np.ndarray` (to be loaded later) holds whatever memory it got, NaN or huge, and
would hide its masking. Only arrays the resolver maps to reference parameters are written, so a
causal mask the candidate keeps as a buffer (0 / -inf) stays as built.
"""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited

COMPONENTS = ("mha", "encoder_layer", "decoder_layer")


def _np(value):
    out = value[0] if isinstance(value, (tuple, list)) and value else value
    if hasattr(out, "detach"):
        out = out.detach().cpu().numpy()
    elif not isinstance(out, np.ndarray) and isinstance(getattr(out, "data", None), np.ndarray):
        out = out.data                          # a tensor of the candidate's own autograd
    return np.asarray(out, dtype=np.float64)


def probe(adapter) -> None:
    """Narrow the first mask to causal draws when the candidate provably masks the future itself."""
    if adapter.hooks is not None and adapter.hooks.call is not None:
        return
    if adapter.comp.name not in COMPONENTS or adapter.mode not in ("class", "instance"):
        return
    mask = adapter.comp.masks[0]
    binding = getattr(adapter, "binding", None)
    if binding is None or "causal" not in mask.kinds:
        return
    parts = set((binding.guessed or {}).values())
    padding_only = "padding_mask:self" in parts and "causal_mask:self" not in parts
    if mask.name not in binding.unbound and not padding_only:
        return
    if any(v is False and "mask" in k.lower() for k, v in binding.constants.items()):
        return                       # a mask switch passed False (mask_switch): told not to mask
    if adapter.caps.valid_lens or adapter.caps.list_input:
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    m = adapter.finish_module(obj)
    _drawn_weights(adapter, m)
    fn = adapter.call_target(m)
    D = adapter.probe_hyper()["d_model"]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4, D)).astype(adapter.opts.dtype)
    memory = rng.standard_normal((2, 3, D)).astype(adapter.opts.dtype)

    one = adapter.caps.one_sequence          # (T, d) code (one_sequence_modules): its first sequence

    def run(a):
        t = adapter.ops.from_np(a[0] if one else a)
        vals = {s.name: t for s in adapter.comp.inputs}
        vals.update({"x": t, "query": t, "key": t, "value": t, "key_value": t})
        if "memory" in vals:
            vals["memory"] = adapter.ops.from_np(memory[0] if one else memory)
        vals.update({mk.name: None for mk in adapter.comp.masks})
        res = run_limited(lambda: binding.call(fn, vals), 10.0)
        got = _np(res.value) if isinstance(res, Finished) else None
        return got[None] if one and got is not None else got

    base = run(x)
    last, first = x.copy(), x.copy()
    last[:, -1] += rng.standard_normal(D)          # not a constant: a LayerNorm would remove it
    first[:, 0] += rng.standard_normal(D)
    decide(adapter, base, run(last), run(first), mask.name, padding_only)


def _drawn_weights(adapter, m) -> None:
    """Write drawn finite values into the slots the resolver maps to reference parameters; when
    they cannot be mapped at the probe's sizes, the weights stay as constructed."""
    from ...components.base import draw_params
    from ..resolver import resolve
    from ..slots import candidate_arrays, numpy_space, torch_space
    from . import norm_order
    if adapter.comp.tree is None or adapter.hooks is not None:
        return
    try:
        hyper = adapter.probe_hyper()
        shapes = norm_order.part_shapes(adapter.comp.name, hyper) if adapter.comp.name in \
            norm_order.PARTS else {n: tuple(s) for n, s in adapter.comp.param_shapes(hyper).items()}
        space, slots = torch_space(m) if adapter.framework == "torch" else numpy_space(m)
        entries, _ = resolve(adapter.comp.tree, space, shapes, hyper, name_map=adapter.opts.name_map,
                             layout=adapter.opts.weight_layout,
                             hints=getattr(adapter, "head_axes", None),
                             class_layout=getattr(adapter, "class_layout", None))
        params = draw_params(np.random.default_rng(11), shapes, "float64")
        for cname, arr in candidate_arrays(entries, params, adapter.opts.dtype).items():
            slots[cname].set(arr)
    except Exception:  # noqa: BLE001 - unmapped at these sizes: the probe sees the built weights
        return


def decide(adapter, base, moved_last, moved_first, mask_name: str,
           padding_only: bool = False) -> None:
    """Causal draws only when no earlier output moved with the last input while later outputs
    followed the first (the outputs of one input, its last position changed, its first).
    padding_only: the forward takes only the key padding of that mask (recognise/mask_parts),
    called all-attend by the probe; mask_parts then keeps the causal draws."""
    if base is None or any(a is None or a.shape != base.shape or a.ndim != 3
                           for a in (moved_last, moved_first)):
        return
    tol = 1e-9 if adapter.opts.dtype == "float64" else 1e-4
    scale = max(1.0, float(np.abs(base).max()))
    earlier_kept = np.abs(moved_last[:, :-1] - base[:, :-1]).max() <= tol * scale
    last_moved = np.abs(moved_last[:, -1] - base[:, -1]).max() > 1e3 * tol * scale
    mixes = np.abs(moved_first[:, 1:] - base[:, 1:]).max() > 1e3 * tol * scale
    if earlier_kept and last_moved and mixes:
        adapter.caps.mask_kinds[mask_name] = ("causal",)
        adapter.notes[:] = [n for n in adapter.notes if f"drew no {mask_name!r}" not in n
                            and f"no {mask_name!r} argument" not in n]
        given = (f"forward takes only the key padding of {mask_name!r}" if padding_only else
                 f"forward has no {mask_name!r} argument")
        adapter.notes.append(f"{given} but its outputs do not depend on later positions (a probe "
                             f"changed the last input): the candidate masks the future itself, so "
                             f"only causal {mask_name} masks are drawn")
