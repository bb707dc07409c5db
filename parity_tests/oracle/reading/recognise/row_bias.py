"""Recogniser: arrays kept with extra size-1 axes. A bias `np.zeros((1, d_ff))`, a gain
`torch.ones(1, d)`, or the (out, in, 1) weight of a kernel-size-1 `torch.nn.Conv1d` used as a
position-wise Linear: mapped onto the reference's (n,) / (out, in), reshaped on the way in and out."""
from __future__ import annotations


def unit_axes_shape(ref_shape, cand_shape) -> tuple | None:
    """The candidate's shape when it is the reference's with size-1 axes inserted (order kept),
    else None."""
    if cand_shape is None:
        return None
    r, c = tuple(ref_shape), tuple(cand_shape)
    if c == r or len(c) <= len(r):
        return None
    i = 0
    for d in c:
        if i < len(r) and d == r[i]:
            i += 1
        elif d != 1:
            return None
    return c if i == len(r) else None


vector_shape = unit_axes_shape
