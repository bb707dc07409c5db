"""Recogniser: attention projections kept with the heads on axes of their own, as einsum code and
interpretability libraries write them, instead of one (d_model, d_model) matrix:

    heads last    W_q (d_model, heads, d_head)  q = einsum("btd,dhk->bhtk", x, W_q)
                  W_o (d_model, heads, d_head)  the (out, in) view of the output projection
    heads first   W_q (heads, d_head, d_model)  the (out, in) view;  W_o (heads, d_head, d_model)
                  out = einsum("bhtk,hkd->btd", z, W_o)
    stacked       W_q (heads, d_model, d_head)  one (in, out) matrix per head;  W_o (heads, d_model,
                  d_head) likewise
    bias          b_q (heads, d_head)

Head i's rows of the reference's (out, in) matrix are rows i*d_head:(i+1)*d_head of its head side
(the output side for q, k, v; the input side for the output projection). Values are rearranged on
the way in and gradients on the way back. When the sizes of an example leave two layouts possible
(d_head 1: (d, H, 1) is also (H, d, 1)), the layout seen on the first build (d_model 4, 2 heads,
where every layout has its own shape) decides; the probe records where the d_model axis is.
"""
from __future__ import annotations

import numpy as np

from ..resolution import any_layer

COMPONENTS = ("mha", "encoder_layer", "decoder_layer", "model")
OUT_SIDE = ("q_proj", "k_proj", "v_proj")


def head_side(ref: str) -> int | None:
    owner = ref.rsplit(".", 2)[-2] if ref.count(".") >= 1 else ""
    if owner in OUT_SIDE:
        return 0
    if owner == "out_proj":
        return 1
    return None


def layout(ref: str, ref_shape, cand_shape, hyper: dict, d_axis: int | None = None):
    """(transpose, pre_shape, perm) such that the candidate's array is
    (W.T if transpose else W).reshape(pre_shape).transpose(perm or identity), or None."""
    side, H = head_side(ref), hyper.get("num_heads")
    if d_axis == "unit" or side is None or not H or cand_shape is None:
        return None
    r, c = tuple(ref_shape), tuple(cand_shape)
    if isinstance(d_axis, tuple):          # (unit axis, d_model axis without it): (H, 1, d, d_head)
        unit, d_axis = d_axis
        if len(c) != 4 or c[unit] != 1:
            return None
        c = c[:unit] + c[unit + 1:]        # arranged as the 3 axes; slots add the unit axis back
    if len(r) == 1 and side == 0 and len(c) == 2 and c == (H, r[0] // H) and r[0] % H == 0 and H > 1:
        return (False, c, None)
    if len(r) != 2 or len(c) != 3 or r[side] % H:
        return None
    dk, other = r[side] // H, r[1 - side]
    heads_first = (side == 1, (H, dk, other), None, 2)
    heads_last = (side == 0, (other, H, dk), None, 0)
    stacked = (False, (H, dk, other), (0, 2, 1), 1) if side == 0 else \
        (False, (other, H, dk), (1, 0, 2), 1)
    fits = []
    for t, pre, perm, ax in (heads_first, heads_last, stacked):
        final = tuple(pre[i] for i in perm) if perm else pre
        if final == c:
            fits.append((t, pre, perm, ax))
    if len(fits) > 1 and d_axis is not None:
        fits = [f for f in fits if f[3] == d_axis]
    if len(fits) > 1 and not _same(fits, r):
        return None
    return fits[0][:3] if fits else None


def arrange(v: np.ndarray, transpose: bool, pre, perm) -> np.ndarray:
    a = (v.T if transpose else v).reshape(pre)
    return a.transpose(perm) if perm else a


def unarrange(g: np.ndarray, ref_shape, transpose: bool, perm, pre=None) -> np.ndarray:
    g = np.asarray(g)
    if pre is not None:                    # a unit axis the candidate keeps: back to the 3 axes
        g = g.reshape(tuple(pre[i] for i in perm) if perm else tuple(pre))
    if perm:
        g = g.transpose(np.argsort(perm))
    r = tuple(ref_shape)
    return g.reshape(r[::-1]).T if transpose else g.reshape(r)


def _same(fits, r) -> bool:
    probe = np.arange(int(np.prod(r)), dtype=np.float64).reshape(r)
    outs = [arrange(probe, t, pre, perm) for t, pre, perm, _ in fits]
    return all(np.array_equal(outs[0], o) for o in outs[1:])


def _shapes(adapter, obj) -> dict:
    if adapter.framework == "torch":
        from ..plain_torch_params import named_tensors  # a module's, or a plain class's
        return {n: tuple(p.shape) for n, p in named_tensors(obj).items()}
    from ..slots import numpy_space
    space, _ = numpy_space(obj)
    return {n: tuple(s) for n, s in space.shapes.items() if s is not None}


def probe(adapter) -> None:
    """Remember, for each 3-axis array, where the d_model axis sits (an int), or "unit" when it is
    a matrix with a size-1 axis added (a kernel-size-1 Conv1d): built once with d_model 12 and 3
    heads, where every layout has its own shape."""
    if adapter.comp.name not in COMPONENTS or adapter.mode != "class" or adapter.probe is None:
        return
    if adapter.hooks is not None and adapter.hooks.weights is not None:
        return
    notes = list(adapter.notes)         # the extra builds' guesses are the probe build's again
    try:
        if not any(len(s) in (3, 4) for s in _shapes(adapter, adapter.probe).values()):
            return
        hyper = dict(adapter.probe_hyper(), d_model=12, num_heads=3, d_k=4, d_v=4)
        shapes = _shapes(adapter, adapter.construct(hyper))
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    finally:
        adapter.notes[:] = notes
    hints = {}
    for n, s in shapes.items():
        if len(s) == 3 and s.count(12) == 1 and 1 not in s:
            hints[n] = s.index(12)
        elif len(s) == 3 and 1 in s:
            hints[n] = "unit"
        elif len(s) == 4 and s.count(1) == 1 and s.count(12) == 1:   # (H, 1, d, d_head) per head
            unit = s.index(1)
            three = s[:unit] + s[unit + 1:]
            hints[n] = (unit, three.index(12))
    for n, hint in list(hints.items()):     # the probe builds one layer: the others take its hint
        hints.setdefault(any_layer(n), hint)
    if hints:
        adapter.head_axes = hints
