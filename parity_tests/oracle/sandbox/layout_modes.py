"""Three more of the worker's extra runs (sandbox/modes.py registers them): the same arithmetic on
inputs handed over the way real callers hand them over, which the main run never does.

    aliased  multi-head attention taking query, key and value (not a self-attention forward): on an
             example whose three inputs have one shape, called with ONE array for all three
             (`mha(x, x, x)`, the commonest call of such a layer in a network). The parent's inputs
             for this mode are equal; the worker passes the very same object three times, so code
             that branches on `query is key` (as nn.MultiheadAttention's fused path does) runs that
             branch. Answers the output, the weights, every parameter gradient and the gradient of
             the one input (`grad_input:query`: torch accumulates the three uses in one leaf; a
             NumPy backward's three input gradients are summed), which the parent compares with its
             reference's dq + dk + dv.
    strided  every float input handed over as a non-contiguous view holding the same values (its
             last two axes transposed in memory), NumPy ones writable views of a private copy (as
             a caller's views are), and the upstream gradient a non-contiguous, read-only array
             too (what autograd hands a custom Function's backward after a transpose downstream):
             code taking another path on the memory layout (`is_contiguous()`,
             `flags.c_contiguous`, reading a buffer as if it were C-ordered) shows it. On about
             half the examples (chosen from the mode's inputs, drawn from the check's secret)
             every float input is laid out as a network hands it over instead: its axes but the
             last reversed in memory, the last contiguous (`network_layout`: what
             `.view(B, T, H, d).transpose(1, 2)` leaves, or a (T, B, d) buffer read batch-first).
             Code refusing the other layouts (a strided last axis, a read-only array) while
             computing otherwise on a network's meets it there. Answers everything the main run
             answers. A candidate raising there (a torch `.view` on its input) is not compared:
             that is loud wherever it happens.
    broadcast_mask  every mask whose query rows are all alike (a key padding) handed over with one
             row, (B, 1, 1, Tk) for (B, 1, Tq, Tk): the form `(src != pad).unsqueeze(1).unsqueeze(2)`
             makes, which broadcasts to the same mask; and every mask of three axes or more alike
             in each batch row of a batch of two or more (a causal mask) with one batch row,
             (1, 1, Tq, Tk), as `torch.tril(...)[None, None]` makes it. Answers everything the main
             run answers; a candidate raising there (a mask `.view`ed to its full shape) is not
             compared.
    relaid   every float input and the upstream gradient handed over in another memory layout
             again, each its own, cycled over the examples: Fortran order (every axis reversed in
             memory, as `np.asfortranarray` or data read from a column-major file), negative
             strides (NumPy: a reversed view of a reversed copy, as `x[:, ::-1]` leaves), a slice
             of a wider buffer (a row stride of three widths at an offset: what splitting a fused
             q|k|v product leaves) and, where the parent drew the example with every batch row
             alike, a broadcast (stride 0 along the batch: `x.expand(B, ...)`, and the upstream
             gradient autograd hands a backward after a `.sum()`; on half those examples every
             input is one, on the rest each takes its turn). NumPy inputs writable but for
             a broadcast, the upstream gradient read-only. Code
             branching on a layout the `strided` mode does not make shows it. A candidate raising
             there is not compared.

    mask_dtype  where the assignment accepts masks of other dtypes too (`mask_dtypes_also`, e.g.
             bool and 0/1 int): every masked example also runs with its masks in one of them
             (cycled over the examples), the same keep/hide values, everything compared. A
             candidate raising there fails as anywhere (the assignment says it takes them).

Each answers {} where it does not apply. Nothing here decides anything (core/modes.py compares).
"""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any

import numpy as np

from ..components import REF, Case
from .raised_there import candidate_raised, no_gradient, zero_gradients

ALIASED = ("query", "key", "value")


def relist(values: dict, moved: dict) -> None:
    """A forward taking its inputs as one list (`forward([q, k, v])`, recognise/list_input): the
    list's items that were replaced by another form (`moved`, {id(item): its replacement})
    replaced in the list too, so such a forward meets every form the others meet."""
    for k, v in list(values.items()):
        if isinstance(v, list) and any(id(x) in moved for x in v):
            values[k] = [moved.get(id(x), x) for x in v]


def with_feed(ad, wrap, run):
    """`run()` with the adapter's feed wrapped by `wrap(real_feed)` (the adapter's own attribute,
    restored afterwards)."""
    real, own = ad.feed, "feed" in vars(ad)
    ad.feed = wrap(real)
    try:
        return run()
    finally:
        if own:
            ad.feed = real
        else:
            del ad.feed


def aliased(ad, case: Case, tick=lambda: None) -> dict:
    caps = ad.caps
    if ad.comp.name != "mha" or caps.self_attention or caps.valid_lens or \
            caps.one_sequence or ad.mode == "instance":
        return {}
    arrs = [case.inputs.get(n) for n in ALIASED]
    if any(a is None for a in arrs) or len({a.shape for a in arrs}) != 1 or \
            not all(np.array_equal(arrs[0], a) for a in arrs[1:]):
        return {}

    def wrap(real):
        def feed(c, grad):
            leaves, feeds, fed_np, masks_np, mask_feeds, values = real(c, grad)
            first = ALIASED[0]
            moved = {id(values[n]): values[first] for n in ALIASED[1:]}
            for n in ALIASED[1:]:
                leaves[n], feeds[n], values[n] = leaves[first], feeds[first], values[first]
            relist(values, moved)
            return leaves, feeds, fed_np, masks_np, mask_feeds, values
        return feed

    inst = ad.instantiate(case)
    if inst.table:
        return {}
    p = with_feed(ad, wrap, lambda: ad.execute(inst, case))
    out = {k: v for k, v in p.values.items() if not k.startswith("grad_input:")}
    grads = [p.values.get(f"grad_input:{n}") for n in ALIASED]
    if all(g is not None for g in grads):
        # torch: one leaf, each name read its accumulated gradient; NumPy: three to be summed
        out["grad_input:query"] = grads[0] if ad.framework == "torch" else \
            np.asarray(grads[0]) + np.asarray(grads[1]) + np.asarray(grads[2])
    return out


def _non_contiguous(ops, x: Any, writable: bool = False) -> Any | None:
    """The same values as a view whose last two axes are transposed in memory; None where that
    layout would still be contiguous (fewer than two axes, or one of them of size 1). A NumPy view
    is read-only unless `writable` (an input: a caller's own views are writable, and code refusing
    read-only arrays would otherwise never meet the layout; an upstream gradient stays read-only)."""
    shape = tuple(getattr(x, "shape", ()))
    if len(shape) < 2 or shape[-1] < 2 or shape[-2] < 2:
        return None
    if ops.name == "torch" and isinstance(x, ops.torch.Tensor):
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    if isinstance(x, np.ndarray):
        view = np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
        view.flags.writeable = writable
        return view
    return None


def network_layout(ops, x: Any) -> Any | None:
    """The same values laid out as a network hands them over: every axis but the last in reverse
    order in memory (for (B, H, T, d) the (T, H, B, d) storage `x.view(B, T, H, d).transpose(1, 2)`
    is a case of; for (B, T, d) a time-first buffer read batch-first), the last contiguous, and
    writable (a view of a fresh array, as a caller's own views are); None where that is still
    contiguous (fewer than two leading axes longer than 1)."""
    shape = tuple(getattr(x, "shape", ()))
    if len(shape) < 3 or sum(n > 1 for n in shape[:-1]) < 2:
        return None
    perm = tuple(reversed(range(len(shape) - 1))) + (len(shape) - 1,)     # its own inverse
    if ops.name == "torch" and isinstance(x, ops.torch.Tensor):
        return x.permute(perm).contiguous().permute(perm)
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(np.transpose(x, perm)).transpose(perm)
    return None


def _run_fed(ad, case: Case, change, changed_before: bool = False) -> dict:
    """The candidate's forward and backward with `change(case, feeds, masks_np, values)` applied
    to what feed() made (True where it changed something); {} where nothing changed or the call
    raised. `changed_before`: the case itself was changed (its upstream gradient)."""
    changed = [changed_before]

    def wrap(real):
        def feed(c, grad):
            leaves, feeds, fed_np, masks_np, mask_feeds, values = real(c, grad)
            changed[0] = bool(change(c, feeds, masks_np, values)) or changed[0]
            return leaves, feeds, fed_np, masks_np, mask_feeds, values
        return feed

    inst = ad.instantiate(case)
    if inst.table:
        return {}
    try:
        got = dict(with_feed(ad, wrap, lambda: ad.execute(inst, case)).values)
    except Exception as exc:  # noqa: BLE001 - raising on this form of input: loud, not compared
        if no_gradient(exc):           # detached there: its values compared, its gradients zeros
            got = with_feed(ad, wrap, lambda: zero_gradients(ad, case))
        elif not candidate_raised(exc):
            raise
        else:
            return {}
    return got if changed[0] else {}


def broadcast_mask(ad, case: Case, tick=lambda: None) -> dict:
    if ad.caps.valid_lens or ad.caps.list_input or getattr(ad, "torch_mha_mask", False) or \
            getattr(ad, "heads_merged_mask", False):
        return {}

    def change(c, feeds, masks_np, values) -> bool:
        done = False
        for n, m in masks_np.items():
            v = values.get(n)
            if v is None or m is None or m.ndim < 2:
                continue
            if m.shape[-2] >= 2 and np.array_equal(m, np.broadcast_to(m[..., :1, :], m.shape)):
                v, m, done = v[..., :1, :], m[..., :1, :], True          # one query row
            if m.ndim >= 3 and m.shape[0] >= 2 and np.array_equal(m, np.broadcast_to(m[:1], m.shape)):
                v, done = v[:1], True                                    # one batch row
            values[n] = v
        return done

    return _run_fed(ad, case, change)


def strided(ad, case: Case, tick=lambda: None) -> dict:
    network = relaid_pick(case) % 2 == 1      # this example's inputs as a network lays them out

    def change(c, feeds, masks_np, values) -> bool:
        moved: dict[int, Any] = {}
        for n, f in list(feeds.items()):
            if c.inputs[n].dtype == REF:
                s = network_layout(ad.ops, f) if network else None
                s = _non_contiguous(ad.ops, f, writable=True) if s is None else s
                if s is not None:
                    moved[id(f)] = feeds[n] = s
        hit = [k for k, v in values.items() if id(v) in moved]
        for k in hit:
            values[k] = moved[id(values[k])]
        relist(values, moved)
        return bool(hit)

    dout = _non_contiguous(ad.ops, case.dout) if isinstance(case.dout, np.ndarray) else None
    return _run_fed(ad, case if dout is None else dataclasses.replace(case, dout=dout), change,
                    changed_before=dout is not None)


NP_LAYOUTS = ("fortran", "reversed", "wide", "broadcast")
TORCH_LAYOUTS = ("fortran", "wide", "broadcast")     # torch has no negative strides
TORCH_DOUT = ("fortran",)


def batch_alike(a: np.ndarray) -> bool:
    """Every batch row (axis 0) of `a` equal to the first, and more than one of them."""
    return a.ndim >= 1 and a.shape[0] > 1 and bool(np.array_equal(a, np.broadcast_to(a[:1], a.shape)))


def relaid_np(a: np.ndarray, how: str, writable: bool = False) -> np.ndarray | None:
    """`a`'s values in the layout `how`, read-only unless `writable` (an input's; a broadcast is
    read-only always, as NumPy makes it); None where that layout is no other than C order."""
    if how == "broadcast":
        return np.broadcast_to(a[:1], a.shape) if batch_alike(a) else None
    if a.ndim < 1 or a.size < 2:
        return None
    if how == "fortran":
        out = np.asfortranarray(a)
    elif how == "reversed":
        out = np.flip(np.flip(a).copy())
    else:
        n = a.shape[-1]
        buf = np.zeros(a.shape[:-1] + (3 * n,), dtype=a.dtype)
        buf[..., n:2 * n] = a
        out = buf[..., n:2 * n]
    if out.flags.c_contiguous and how != "wide":
        return None
    out.flags.writeable = writable
    return out


def relaid_torch(torch, t, how: str):
    """A differentiable view of tensor `t` holding its values in the layout `how`; None where it
    would still be contiguous. A broadcast (`t[:1].expand(...)`, where every batch row is alike)
    collects the whole batch's gradient in the first row (relaid() spreads it back)."""
    if t.dim() < 1 or t.numel() < 2:
        return None
    if how == "broadcast":
        one = t[:1].expand(t.shape)
        return one if t.shape[0] > 1 and torch.equal(t, one) else None
    if how == "fortran":
        rev = tuple(reversed(range(t.dim())))
        out = t.permute(rev).contiguous().permute(rev)
        return None if out.is_contiguous() else out
    n = t.shape[-1]
    return torch.cat([torch.zeros_like(t), t, torch.zeros_like(t)], -1)[..., n:2 * n]


def relaid_pick(case: Case) -> int:
    """Where this example starts the cycle of layouts: from its inputs' bytes (drawn by the parent
    from the check's secret for this mode), so each input meets every layout over a check."""
    return zlib.crc32(b"".join(np.ascontiguousarray(a).tobytes() for a in case.inputs.values()
                               if a.dtype == REF))


def _relay(ad, x, at: int, layouts, writable: bool = False) -> tuple[Any, str] | None:
    """(x in the first layout from `at` on that applies to it, that layout's name), or None;
    `writable`: NumPy inputs writable but for a broadcast (relaid_np)."""
    for k in range(len(layouts)):
        how = layouts[(at + k) % len(layouts)]
        if ad.ops.name == "torch" and isinstance(x, ad.ops.torch.Tensor):
            out = relaid_torch(ad.ops.torch, x, how)
        elif isinstance(x, np.ndarray):
            out = relaid_np(x, how, writable)
        else:
            return None
        if out is not None:
            return out, how
    return None


def relaid(ad, case: Case, tick=lambda: None) -> dict:
    caps = ad.caps
    at, torch_run = relaid_pick(case), ad.framework == "torch"
    # axis 0 of what is fed is the batch's (not a time-first or heads-merged layout)
    batch_first = not (caps.time_first or caps.bh_layout or caps.one_sequence)
    layouts = TORCH_LAYOUTS if torch_run else NP_LAYOUTS
    layouts = layouts if batch_first else tuple(x for x in layouts if x != "broadcast")
    # on half the batch-alike examples every input a broadcast, on the rest each its own layout
    every = batch_first and at % 2 == 0 and isinstance(case.dout, np.ndarray) and batch_alike(case.dout)
    spread: list[str] = []                 # torch inputs fed as broadcasts

    def change(c, feeds, masks_np, values) -> bool:
        moved: dict[int, Any] = {}
        for i, (n, f) in enumerate(list(feeds.items())):
            if c.inputs[n].dtype == REF:
                got = _relay(ad, f, layouts.index("broadcast") if every else at + i, layouts,
                             writable=True)
                if got is not None:
                    moved[id(f)] = feeds[n] = got[0]
                    if torch_run and got[1] == "broadcast":
                        spread.append(n)
        hit = [k for k, v in values.items() if id(v) in moved]
        for k in hit:
            values[k] = moved[id(values[k])]
        relist(values, moved)
        return bool(hit)

    dout = case.dout
    if isinstance(dout, np.ndarray):
        d = dout.astype(ad.opts.dtype)
        got = (relaid_np(d, "broadcast"), "broadcast") if batch_first and batch_alike(d) else \
            _relay(ad, d, at, TORCH_DOUT if torch_run else NP_LAYOUTS[:3])
        dout = got[0] if got is not None else None
    else:
        dout = None
    out = _run_fed(ad, case if dout is None else dataclasses.replace(case, dout=dout), change,
                   changed_before=dout is not None)
    for n in spread:                       # the first row holds the batch's sum; every row alike
        g = out.get(f"grad_input:{n}")
        if g is not None:
            g = np.asarray(g)
            out[f"grad_input:{n}"] = np.broadcast_to(g.sum(axis=0, keepdims=True) / g.shape[0],
                                                     g.shape).copy()
    return out


def mask_dtype(ad, case: Case, tick=lambda: None) -> dict:
    opts = ad.opts
    also = [d for d in (opts.mask_dtypes_also or ()) if d != opts.mask_dtype]
    if not also or opts.mask_convention == "additive" or ad.caps.valid_lens or \
            getattr(ad, "torch_mha_mask", False) or all(m is None for m in case.masks.values()):
        return {}
    held = opts.mask_dtype
    opts.mask_dtype = also[relaid_pick(case) % len(also)]
    try:
        inst = ad.instantiate(case)
        return {} if inst.table else dict(ad.execute(inst, case).values)
    finally:
        opts.mask_dtype = held
