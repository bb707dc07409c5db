"""Recogniser: positional modules whose forward returns the table, (1, T, d) or (T, d), instead of
x + PE (the caller adds it). Found by a probe with batch 2: an output that has no batch axis of 2 is
a table. The oracle then compares x + table[:T] with the reference; the input gradient is then the
identity, not the candidate's, and is not checked."""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited

NO_GRAD = "the candidate returns the positional table; the gradient of x + table is not its own"


def add_input(table, x, out_shape):
    """x + table broadcast to (B, T, d); works for numpy arrays and torch tensors."""
    B, T, D = out_shape
    t = table.reshape(tuple(table.shape[-2:])) if len(table.shape) == 3 and table.shape[0] == 1 \
        else table
    if len(t.shape) != 2 or t.shape[-1] != D or t.shape[0] < T:
        return table                           # the runner reports the shape
    return x + t[:T]


def probe(adapter) -> None:
    """Set caps.returns_table for a positional module whose forward returns the table."""
    if adapter.hooks is not None and adapter.hooks.call is not None:
        return                          # the adapter file says how to call it
    if adapter.comp.name != "positional" or adapter.mode not in ("class", "instance") or \
            adapter.caps.table:
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    m = adapter.finish_module(obj)
    D = adapter.probe_hyper()["d_model"]
    x = adapter.ops.from_np(np.random.default_rng(0).standard_normal((2, 3, D)).astype(adapter.opts.dtype))
    fn = m if adapter.framework == "torch" else getattr(m, "forward", m)
    res = run_limited(lambda: adapter.binding.call(fn, {"x": x}), 10.0)
    if not isinstance(res, Finished):
        return
    shape = tuple(getattr(res.value, "shape", ()))
    if (len(shape) == 2 and shape[1] == D) or (len(shape) == 3 and shape[0] == 1 and shape[2] == D):
        adapter.caps.returns_table = True
        adapter.notes.append(f"forward returns the positional table {shape} rather than x + PE: "
                             f"compared x + table; the input gradient is not checked")
