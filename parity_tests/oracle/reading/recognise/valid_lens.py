"""Recogniser: length-style masks. A forward argument named `valid_lens` (`lengths`, `seq_lens`,
`src_len`, ...) takes, for each sequence, the number of keys it may attend to: shape (B,) (or
(B*H,) for a (batch*heads, T, d) sdpa), as d2l's masked_softmax. Only key-padding masks can be said
this way: draws are limited to no mask and padding (causal draws skipped, and the report says so).
Lengths keep the FIRST keys; a padding draw that keeps others is handed over with the keys (k and v,
the same permutation per sequence) reordered so that the kept ones come first: attention does not
depend on the order of its keys, and the returned weights are put back in the original key order
(gradients of k and v flow back through the reordering). For self-attention and encoder layers,
where queries and keys are the same positions, the whole sequence x is reordered and the output rows
(and the gradient of x, the upstream gradient going in) are put back: without positional encodings a
layer does not depend on the order of its positions. Recognised for sdpa, multi-head attention and
encoder layers."""
from __future__ import annotations

import numpy as np

from ..signatures import InterfaceError

NAMES = ("valid_lens", "valid_len", "valid_length", "valid_lengths", "lengths", "lens", "seq_lens",
         "seq_len", "src_len", "src_lens", "key_lengths", "key_lens", "x_lens", "input_lengths",
         "sequence_lengths", "seq_lengths", "src_lengths", "enc_valid_lens", "dec_valid_lens")
KINDS = ("none", "padding")


KEY_AXIS = {"sdpa": {"k": 2, "v": 2}, "mha": {"key": 1, "value": 1}}
ROW_AXIS = {"mha": {"x": 1}, "encoder_layer": {"x": 1}}   # self-attention: positions move together


def axes(comp_name: str, self_attention: bool) -> tuple[dict, bool]:
    """({input name: axis reordered}, whether the output rows move with it)."""
    if comp_name == "encoder_layer" or (comp_name == "mha" and self_attention):
        return ROW_AXIS[comp_name], True
    return KEY_AXIS.get(comp_name, {}), False


def detect(binding, comp, caps) -> dict:
    """{mask source: per_query (False: shape (B,))} for masks bound to a length-style argument."""
    out = {}
    if comp.name not in KEY_AXIS and comp.name not in ROW_AXIS:
        return out
    for m in comp.masks:
        arg = binding.arg_of.get(m.name)
        if arg is not None and arg.lower() in NAMES:
            out[m.name] = False
    return out


def from_keep(keep, name: str, per_query: bool = False, heads: int = 0):
    """Keep mask (B, 1, Tq, Tk) of a key-padding draw -> valid lengths (B,) int64 (None: no mask)."""
    if keep is None:
        return None
    k = np.asarray(keep, dtype=bool)
    rows = k[:, 0, 0, :]                                            # (B, Tk)
    lens = rows.sum(axis=-1)                                        # (B,)
    prefix = np.arange(rows.shape[-1])[None, :] < lens[:, None]     # (B, Tk)
    if not (np.array_equal(rows, prefix) and (k == rows[:, None, None, :]).all()):
        raise InterfaceError(f"{name}: a length-style argument can only express key padding at the "
                             f"end of each sequence; this draw is another mask")
    if heads:
        lens = np.repeat(lens, heads)                               # (B*H,)
    return lens.astype(np.int64)


def key_order(keep) -> np.ndarray:
    """(B, Tk) permutation of the keys putting the kept ones first (stable)."""
    rows = np.asarray(keep, dtype=bool)[:, 0, 0, :]                 # (B, Tk)
    return np.argsort(~rows, axis=-1, kind="stable")


def take(a, perm: np.ndarray, axis: int):
    """a reordered along `axis` by perm (B, Tk); numpy array or torch tensor (differentiable)."""
    shape = [1] * len(a.shape)
    shape[0], shape[axis] = perm.shape[0], perm.shape[1]
    idx = perm.reshape(shape)
    if isinstance(a, np.ndarray):
        return np.take_along_axis(a, np.broadcast_to(idx, a.shape[:axis] + perm.shape[1:2]
                                                     + a.shape[axis + 1:]), axis)
    import torch
    t = torch.from_numpy(np.broadcast_to(
        idx, tuple(a.shape[:axis]) + perm.shape[1:2] + tuple(a.shape[axis + 1:])).copy())
    return torch.take_along_dim(a, t, dim=axis)


def untake_last(w, perm: np.ndarray):
    """Attention weights (B, ..., Tk) given for reordered keys -> the original key order."""
    inv = np.argsort(perm, axis=-1)                                 # (B, Tk)
    return take(w, inv, len(w.shape) - 1) if len(w.shape) >= 2 else w


def untake(a, perm: np.ndarray, axis: int):
    """Undo take(a, perm, axis)."""
    return take(a, np.argsort(perm, axis=-1), axis)


def untake_grads(grads, perm: np.ndarray):
    """Input gradients a NumPy backward returned for reordered positions -> the original order
    (an array, a tuple/list of arrays, or a dict of them; only (B, T, ...) arrays are moved)."""
    def back(g):
        if isinstance(g, np.ndarray) and g.ndim >= 2 and g.shape[:2] == perm.shape:
            return untake(g, perm, 1)
        return g
    if isinstance(grads, dict):
        return {k: back(v) for k, v in grads.items()}
    if isinstance(grads, (tuple, list)):
        return type(grads)(back(g) for g in grads)
    return back(grads)
