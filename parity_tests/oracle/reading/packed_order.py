"""The order of a packed q|k|v (or k|v) projection's rows. The reference stacks its parts whole:
rows (part, head, width), q | k | v, each holding its heads one after another. Code that splits
one packed output may read its rows in any order of those three axes:

    (part, head, width)   q | k | v thirds, `qkv.chunk(3)` then heads (the plain packing)
    (head, part, width)   `qkv.reshape(B, T, H, 3 * d_k)` then chunked: [q | k | v] of each head
    (width, part, head)   einops `'b t (d k h) -> k b h t d'`: every row index d * 3H + k * H + h
    ... and the other three.

An order is a permutation of the axes (0 part, 1 head, 2 width): the candidate's row of index
(a_order[0], a_order[1], a_order[2]) flattened holds the reference's row (part, head, width).
"""
from __future__ import annotations

import numpy as np

PLAIN = (0, 1, 2)
HEAD_GROUPED = (1, 0, 2)
ORDERS = (PLAIN, HEAD_GROUPED, (2, 1, 0), (2, 0, 1), (0, 2, 1), (1, 2, 0))
"""Every order, the plain packing first and the head-grouped one second (the order a probe tries
them in: the first that fits is taken)."""

WORDS = {PLAIN: "q | k | v thirds", HEAD_GROUPED: "grouped by head ([q | k | v] of head 0, then "
         "head 1, ...)", (2, 1, 0): "(width, head, part)", (2, 0, 1): "(width, part, head), as "
         "einops '(d k h)' splits them", (0, 2, 1): "(part, width, head)", (1, 2, 0): "(head, width, part)"}


def regroup(full: np.ndarray, n: int, heads: int, back: bool = False,
            order: tuple = HEAD_GROUPED) -> np.ndarray:
    """Rows of n stacked (D, ...) blocks (q | k | v, each its heads in turn) put in the candidate's
    `order` of the (part, head, width) axes; back=True undoes it."""
    rest = full.shape[1:]
    sizes = (n, heads, full.shape[0] // (n * heads))
    tail = tuple(range(3, 3 + len(rest)))
    if back:
        inverse = tuple(int(i) for i in np.argsort(order))
        return full.reshape(tuple(sizes[i] for i in order) + rest) \
            .transpose(inverse + tail).reshape(full.shape)
    return full.reshape(sizes + rest).transpose(tuple(order) + tail).reshape(full.shape)


def same_rows(order: tuple, other: tuple, n: int, heads: int, width: int) -> bool:
    """The two orders place every row alike at these sizes (an axis of size 1 has no place)."""
    idx = np.arange(n * heads * width)[:, None]
    return bool(np.array_equal(regroup(idx, n, heads, order=order),
                               regroup(idx, n, heads, order=other)))
