"""Recogniser: attention and layers that take their sequences time-first, (T, B, d) (fairseq-style
code, torch.nn.MultiheadAttention's default layout). Found by a probe when the adapter is prepared,
on the small probe build: with two sequences, a change at one position of sequence 1 must leave
sequence 0's output alone. Fed (B, T, d), time-first code mixes them (it takes the batch axis for
time) or raises; fed (T, B, d), it keeps them apart. Only when both hold are the inputs handed over
(T, B, d) and the output read back from (T, B, d); gradients flow back through the transpose, and
the report says so. Batch-first code fails the second test (fed (T, B, d) it mixes the two), and a
candidate mixing its sequences either way stays batch-first and is compared as it is.

A positional module mixes nothing, so it is told by what it adds (output - input) to zeros: the
PyTorch tutorial's module (a (max_len, 1, d) table, `x + pe[:x.size(0)]`) fed (B, T, d) adds one
row per sequence, the same at every position; fed (T, B, d) it adds one row per position, the same
for every sequence, as batch-first code does fed (B, T, d). Only when both hold is it time-first."""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out

COMPONENTS = ("mha", "encoder_layer", "decoder_layer", "positional")


def _call(adapter, fn, x: np.ndarray, mem: np.ndarray):
    ops, dtype = adapter.ops, adapter.opts.dtype
    t = ops.from_np(x.astype(dtype))
    vals = {"x": t, "query": t, "key": t, "value": t, "memory": ops.from_np(mem.astype(dtype))}
    vals.update({m.name: None for m in adapter.comp.masks})
    try:
        res = run_limited(lambda: adapter.binding.call(fn, vals), 10.0)
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return None
    if not isinstance(res, Finished):
        return None
    return array_out(res.value)


def _moved(a, b, index) -> bool:
    return float(np.abs(a[index] - b[index]).max()) > 1e-9 * max(1.0, float(np.abs(a).max()))


def probe(adapter) -> None:
    if adapter.comp.name not in COMPONENTS or adapter.hooks is not None:
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj if adapter.mode == "instance" else None
    if obj is None or adapter.caps.list_input or adapter.caps.returns_table:
        return
    try:
        fn = adapter.finish_module(obj)
    except Exception:  # noqa: BLE001
        return
    conventions = ("keep", "drop") if adapter.opts.mask_convention == "keep" else (adapter.opts.mask_convention,)
    found = None
    for conv in conventions:               # a padding flag read the other way round hides every key
        adapter.opts.mask_convention, before = conv, adapter.opts.mask_convention
        try:
            found = (_added_time_first if adapter.comp.name == "positional" else _time_first)(adapter, fn)
        finally:
            adapter.opts.mask_convention = before
        if found is not None:
            break
    if found:
        adapter.caps.time_first = True
        found = ("it adds one row per sequence when fed (B, T, d), one per position when fed "
                 "(T, B, d)" if adapter.comp.name == "positional" else
                 "a probe found one sequence's positions changing another's output when fed "
                 "(B, T, d), never when fed (T, B, d)")
        adapter.notes.append(f"the candidate takes its sequences time-first, (T, B, d): {found}; inputs "
                             f"handed over and outputs read back time-first")


def _time_first(adapter, fn) -> bool | None:
    """True: time-first; False: not; None: no finite answer fed time-first (try another reading)."""
    D = int(adapter.probe_hyper()["d_model"])
    B, T, S = 2, 3, 4
    rng = np.random.default_rng(5)
    x, mem = rng.standard_normal((B, T, D)), rng.standard_normal((B, S, D))
    x2 = x.copy()
    x2[1, 0] += rng.standard_normal(D)                 # sequence 1, position 0 (not a constant:
    #                                                     a pre-norm layer's LayerNorm removes one)
    adapter.caps.time_first = True                     # parts of masks cut from (T, B, d) inputs
    try:
        tf = [_call(adapter, fn, a.swapaxes(0, 1), mem.swapaxes(0, 1)) for a in (x, x2)]
    finally:
        adapter.caps.time_first = False
    if any(o is None or o.shape != (T, B, D) or not np.all(np.isfinite(o)) for o in tf):
        return None
    if _moved(*tf, (slice(None), 0)) or not _moved(*tf, (slice(None), 1)):
        return False                                   # fed (T, B, d), sequence 0 must stay put
    bf = [_call(adapter, fn, a, mem) for a in (x, x2)]
    return not (all(o is not None and o.shape == (B, T, D) for o in bf) and not _moved(*bf, 0))


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return float(np.abs(a - b).max()) <= 1e-9 * max(1.0, float(np.abs(a).max()))


def _added_time_first(adapter, fn) -> bool | None:
    """A positional module: True when what it adds to zeros is one row per sequence fed (B, T, d)
    and one row per position, the same for both sequences, fed (T, B, d)."""
    D = int(adapter.probe_hyper()["d_model"])
    B, T = 2, 3
    zeros = np.zeros((B, T, D))
    bf = _call(adapter, fn, zeros, zeros)
    adapter.caps.time_first = True
    try:
        tf = _call(adapter, fn, zeros.swapaxes(0, 1), zeros)
    finally:
        adapter.caps.time_first = False
    if any(o is None or not np.all(np.isfinite(o)) for o in (bf, tf)) or \
            bf.shape != (B, T, D) or tf.shape != (T, B, D):
        return False
    per_sequence = not _same(bf[0], bf[1]) and all(_same(bf[:, 0], bf[:, t]) for t in range(T))
    per_position = _same(tf[:, 0], tf[:, 1]) and not _same(tf[0], tf[1])
    return per_sequence and per_position
