"""Recogniser: bare square projection matrices used as `x @ W` (stored (in, out), CS231n style)
rather than `x @ W.T` (stored (out, in), as torch.nn.Linear). Shapes cannot tell a square matrix's
layout, so a probe on the first example decides, for multi-head attention, before the search:

    W_q = W_k = 0 (every query attends uniformly), W_v = A, W_o = C (random), biases 0,
    one sequence: the output is mean(value) @ A.T @ C.T for (out, in) matrices,
    mean(value) @ A @ C for (in, out) ones.

For a whole encoder layer the same probe runs with the self-attention so set, the feed-forward's
weights 0 (it adds nothing) and the norms' gains 1, biases 0: the output is LN(LN(x + mean(x) @ M))
post-norm, x + mean(LN(x)) @ M pre-norm, M = A.T @ C.T or A @ C; for a decoder layer the
cross-attention likewise (its own A, C) adds mean(memory) @ M' after the self-attention. Only when the feed-forward's
matrices are not square on that example and are already read as (in, out) by their shapes (the
layer is x @ W throughout); with d_ff = d_model a later example decides.

Attention that masks the future itself (builtin_causal: no mask argument, causal draws only)
averages each query's prefix instead: position t gets the mean of positions 0 .. t.

A plain packed q|k|v (a (3D, D) or (D, 3D) matrix) has its layout fixed by its shape, and so do
projections kept with the heads on axes of their own ((H, D, d_head) per head, recognise/head_axes)
and a list of single heads whose (D, d_head) pieces are not square (with one head, a square piece
is read like any square matrix):
their values are handed over so, and the probe then decides the square output projection alone.

When the candidate's output is the second and not the first, its square matrices are read as
(in, out) (gradients too), and the report says so. Anything else keeps --weight-layout: a candidate
mixing layouts, or wrong, is then compared as usual and fails there. The probe cannot buy a match: it
only picks how the reference's weights are handed over, and every quantity is still compared with
the reference (a candidate that is right under one layout is right code).
"""
from __future__ import annotations

import numpy as np

from ..calls import Finished, Raised, run_limited
from .function_calls import squeeze_mask

PROJ = ("q_proj", "k_proj", "v_proj", "out_proj")


def array_out(value) -> np.ndarray | None:
    out = value[0] if isinstance(value, (tuple, list)) and value else value
    if hasattr(out, "detach"):
        out = out.detach().cpu().numpy()
    elif not isinstance(out, np.ndarray) and isinstance(getattr(out, "data", None), np.ndarray):
        out = out.data                  # a tensor of the candidate's own autograd (autograd_tensors.py)
    try:
        return np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        return None


PREFIX = {"mha": ("",), "encoder_layer": ("self_attn.",),
          "decoder_layer": ("self_attn.", "cross_attn.")}
FFN = ("feed_forward.linear1.weight", "feed_forward.linear2.weight")


def _ffn_in_out(inst) -> bool:
    """The layer's feed-forward matrices are non-square here and read as (in, out) by shape."""
    for ref in FFN:
        e = inst.entries.get(ref)
        if e is None or e.cand is None or e.parts or e.rows or e.cand_shape is not None \
                or e.how == "map" or not e.transpose:
            return False
    return True


def _ffn_by_class(adapter, inst) -> bool:
    """A torch layer whose feed-forward matrices are (out, in) by shape here (nn.Linear) while its
    attention keeps bare square matrices: after a switch to (in, out), class_layout keeps a square
    feed-forward matrix of a class seen (out, in) as it is, so only the attention's are read anew."""
    if adapter.framework != "torch" or not any(v == {False} for v in
                                                (getattr(adapter, "class_layout", None) or {}).values()):
        return False
    for ref in FFN:
        e = inst.entries.get(ref)
        if e is None or e.cand is None or e.parts or e.rows or e.cand_shape is not None \
                or e.how == "map" or e.transpose:
            return False
    return True


def applies(adapter, inst) -> bool:
    if adapter.comp.name not in PREFIX or adapter.opts.weight_layout != "out_in":
        return False
    if inst.obj is None and adapter.mode not in ("function", "pair"):
        return False
    if adapter.hooks is not None or getattr(adapter, "layout_probed", False):
        return False
    pres = PREFIX[adapter.comp.name]
    if pres != ("",) and not (_ffn_in_out(inst) or _ffn_by_class(adapter, inst)):
        return False
    for pre in pres:
        for p in PROJ:
            e = inst.entries.get(f"{pre}{p}.weight")
            if e is None or e.cand is None or e.how == "map":
                return False             # none, or the user said how it is kept
            if p == "out_proj" and (e.parts or e.rows or e.cand_shape is not None):
                return False             # the square output projection is what the probe reads
            if e.parts and any(len(part[3] or ()) not in (0, 2) for part in e.parts):
                return False             # per-head pieces: plain matrices only
            if e.cand_shape is not None and e.pre_shape is None:
                return False
            if e.rows and (e.how != "packed" or e.grouped):
                return False             # only a plain packed q|k|v, its layout fixed by shape
    return True


def _fixed(e) -> bool:
    """A projection whose layout its shape already fixed: rows of a packed q|k|v, heads on axes of
    their own ((H, d_model, d_head) stacked per head: recognise/head_axes), or per-head pieces read
    as (in, out) by their shape ((d_model, d_head) each, a list of single heads)."""
    return e.rows is not None or e.pre_shape is not None or \
        (bool(e.parts) and all(part[2] for part in e.parts))


def probe_weights(adapter, case, seed: int):
    """The weights and inputs of a probe that reads how the attention's value-then-output product
    is written: every parameter 0 (so q = k = 0: uniform attention over the keys) except each
    attention's v_proj.weight = A and out_proj.weight = C (random (D, D)) and the norms' gains 1.
    Returns (params, [(A, C) per attention], x (1, 3, D), memory (1, 4, D))."""
    D = case.hyper["d_model"]
    rng = np.random.default_rng(seed)
    pres = PREFIX[adapter.comp.name]
    AC = [(rng.standard_normal((D, D)), rng.standard_normal((D, D))) for _ in pres]
    params = {k: np.zeros_like(v) for k, v in case.params.items()}
    for pre, (A, C) in zip(pres, AC):
        params[f"{pre}v_proj.weight"], params[f"{pre}out_proj.weight"] = A, C
    for k in params:
        if k.startswith("norm") and k.endswith(".weight"):
            params[k] = np.ones_like(params[k])                  # norms: gain 1, bias 0
    x, mem = rng.standard_normal((1, 3, D)), rng.standard_normal((1, 4, D))
    return params, AC, x, mem


RETRIES = 4
"""Examples on which a probe call that raised is tried again (code that accepts some sizes only,
a mask shaped per head at one head, raises on the others)."""


def all_attend(adapter, spec, x, mem):
    """None, or for a mask argument the signature requires (`forward(q, k, v, mask)` that rejects
    None) an all-attend mask in the chosen convention, as the examples pass it."""
    from ..slots import convert_mask
    if spec.name not in getattr(adapter, "required_masks", ()):
        return None
    keys = mem.shape[1] if spec.k == "S" else x.shape[1]
    keep = np.ones((1, 1, x.shape[1], keys), dtype=bool)
    from .mask_forms import as_call_mask
    return adapter.ops.from_np(as_call_mask(adapter, convert_mask(keep, adapter.opts, adapter.opts.dtype)))


def probe(adapter, inst, case) -> bool:
    """True when the candidate computes x @ W with its square matrices (switch to in_out). Modules
    get the probe's weights written into them, functions as arguments."""
    from ..slots import candidate_arrays
    D = case.hyper["d_model"]
    if D < 2:
        return False                     # a 1 x 1 matrix has no layout: decide on a later example
    adapter.layout_tries = getattr(adapter, "layout_tries", 0) + 1
    adapter.layout_probed = adapter.layout_tries >= RETRIES   # a call that raised is tried again
    params, AC, x, mem = probe_weights(adapter, case, seed=11)
    dtype = adapter.opts.dtype
    try:
        extra = {}
        for cname, arr in candidate_arrays(inst.entries, params, dtype).items():
            if inst.obj is None:                 # a function takes its weights as arguments
                extra[cname] = adapter.ops.from_np(arr)
            else:
                inst.slots[cname].set(arr)
        one = adapter.caps.one_sequence         # (T, d) code (one_sequence_modules): no batch axis
        t = adapter.ops.from_np((x[0] if one else x).astype(dtype))
        vals = {"x": t, "query": t, "key": t, "value": t, "key_value": t,
                "memory": adapter.ops.from_np((mem[0] if one else mem).astype(dtype))}
        vals.update({m.name: all_attend(adapter, m, x, mem) for m in adapter.comp.masks})
        if one:
            vals.update({m.name: squeeze_mask(vals[m.name]) for m in adapter.comp.masks})
        res = run_limited(lambda: inst.binding.call(inst.call, vals, extra), 10.0)
    except Exception:  # noqa: BLE001 - the search reports what is wrong with the candidate
        return False
    if isinstance(res, Raised):
        return False                       # tried again on a later example, up to RETRIES
    adapter.layout_probed = True           # it ran (or ran out of time): decided on this example
    got = array_out(res.value) if isinstance(res, Finished) else None
    got = got[None] if one and got is not None else got
    if got is None or got.shape != x.shape:
        return False
    # a packed (3D, D) / (D, 3D) value projection is handed over in the layout its shape fixes:
    # only the square output projection's layout is in question then
    packed = [_fixed(inst.entries[f"{pre}v_proj.weight"]) for pre in PREFIX[adapter.comp.name]]
    causal = masks_future_itself(adapter, inst)
    out_in, in_out = (probe_output(adapter.comp.name, case.hyper, x, mem, Ms, causal)
                      for Ms in ([A.T @ C.T for A, C in AC],
                                 [(A.T if pk else A) @ C for (A, C), pk in zip(AC, packed)]))
    tol = (1e-9 if dtype == "float64" else 1e-3) * max(1.0, float(np.abs(in_out).max()))
    return bool(np.abs(got - in_out).max() <= tol < np.abs(got - out_in).max())


def masks_future_itself(adapter, inst) -> bool:
    """The candidate takes no first mask and builtin_causal found it masking the future itself (or
    takes it as a key padding and mask_forms found so): its self-attention's uniform weights then
    cover each query's prefix only."""
    first = adapter.comp.masks[0].name if adapter.comp.masks else None
    binding = getattr(inst, "binding", None)
    kinds = set(adapter.caps.mask_kinds.get(first, ()))
    if first is not None and binding is not None and getattr(adapter, "mask_form", None) and \
            kinds == {"causal"}:
        return True                      # a key padding form, the future masked by the layer
    return first is not None and binding is not None and first in binding.unbound \
        and tuple(adapter.caps.mask_kinds.get(first, ())) == ("causal",)


def _ln(x, eps):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)


def probe_output(component: str, hyper: dict, x: np.ndarray, mem: np.ndarray, Ms: list,
                 causal: bool = False) -> np.ndarray:
    """The probe's output when each attention's value-then-output projection is y -> y @ M
    (uniform attention: the mean of its values, over each query's prefix when the candidate masks
    the future itself); the feed-forward adds 0."""
    def avg(t):
        return t.mean(axis=1, keepdims=True)                 # (1, 1, D)

    def avg_self(t):
        if not causal:
            return avg(t)
        return np.cumsum(t, axis=1) / np.arange(1, t.shape[1] + 1)[None, :, None]
    if component == "mha":
        return np.broadcast_to(avg_self(x) @ Ms[0], x.shape)
    eps = float(hyper.get("eps", 1e-5))
    cross = avg(mem) @ Ms[1] if len(Ms) > 1 else 0.0         # decoder: attends to memory (unnormed)
    if hyper.get("norm_first"):                              # x + attn(LN1(x)) [+ cross]
        return x + avg_self(_ln(x, eps)) @ Ms[0] + cross
    y = _ln(x + avg_self(x) @ Ms[0], eps)
    if len(Ms) > 1:
        y = _ln(y + cross, eps)
    return _ln(y, eps)
