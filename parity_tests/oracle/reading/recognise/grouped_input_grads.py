"""Recogniser: a NumPy backward that returns its input gradients grouped in one tuple ahead of
the parameter gradients, as attention written after torch's `nn.MultiheadAttention` does:

    return (dx_q, dx_k, dx_v), {"q_proj_weight": ..., ...}, {"q_proj_bias": ..., ...}

The first item was read as the query's gradient (an object array: WRONG_TYPE). When the first item
of a returned tuple is itself a tuple or list holding exactly one array (or None) per float input
of the call, it is unpacked in place: the input gradients come first, in the forward's order, and
what follows is read as for `return dx, {...}` (returned_grads.py). A single input's gradient
returned alone, or grads of any other shape, are left as they came.
"""
from __future__ import annotations


def _is_array(a) -> bool:
    return a is None or (hasattr(a, "shape") and hasattr(a, "dtype"))


def ungroup(grads, n_inputs: int):
    """`grads` with a leading group of `n_inputs` input gradients unpacked (see the docstring)."""
    if not isinstance(grads, (tuple, list)) or len(grads) < 2 or n_inputs < 2:
        return grads
    first = grads[0]
    if isinstance(first, (tuple, list)) and len(first) == n_inputs and all(_is_array(a) for a in first):
        return (*first, *grads[1:])
    return grads
