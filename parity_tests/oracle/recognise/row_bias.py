"""Recogniser: vectors kept as (1, n) or (n, 1) (a bias `np.zeros((1, d_ff))`, a gain
`torch.ones(1, d_model)`): mapped onto the reference's (n,), reshaped on the way in and out."""
from __future__ import annotations


def vector_shape(ref_shape, cand_shape) -> tuple | None:
    """The candidate's shape when it is the reference vector with a unit axis added, else None."""
    if cand_shape is None or len(ref_shape) != 1:
        return None
    n = ref_shape[0]
    c = tuple(cand_shape)
    return c if c in ((1, n), (n, 1)) else None
