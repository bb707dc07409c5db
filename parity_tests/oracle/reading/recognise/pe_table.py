"""Recogniser: positional modules whose forward returns the table, (1, T, d) or (T, d), instead of
x + PE (the caller adds it). Found by a probe with batch 2: an output that has no batch axis of 2 is
a table. The oracle then compares x + table[:T] with the reference; the input gradient is then the
identity, not the candidate's, and is not checked. A forward that fails on x (B, T, d) is tried on
token ids (B, T) (`batch, seq_len = x.size()`, the embedding's caller passing its ids): when that
returns the table, every example calls it with token ids of the example's (B, T); one that fails on
both and, handed an int 3, returns a table of 3 positions takes the sequence length
(`def forward(self, seq_len): return self.pe[:seq_len]`), and every example calls it with its T.
A forward that takes no input at all (`def forward(self): return table`, the module built for a
maximum length) is called with nothing, its result read as the table (no_input_table).

Every such table is compared as x + table[:T] with the reference, so a table built for a longer
length than the example's is cut to it; one shorter than T is a shape error."""
from __future__ import annotations

import inspect

import numpy as np

from ..calls import Finished, run_limited
from .batch_tables import add_rows, repeated_table

NO_GRAD = "the candidate returns the positional table; the gradient of x + table is not its own"


def add_input(table, x, out_shape):
    """x + table broadcast to (B, T, d); works for numpy arrays and torch tensors."""
    B, T, D = out_shape
    t = table.reshape(tuple(table.shape[-2:])) if len(table.shape) == 3 and table.shape[0] == 1 \
        else table
    rows = add_rows(t, x, out_shape) if len(t.shape) == 3 else None
    if rows is not None:
        return rows                            # repeated along the batch (batch_tables)
    if len(t.shape) != 2 or t.shape[-1] != D or t.shape[0] < T:
        return table                           # the runner reports the shape
    return x + t[:T]


def no_input_table(adapter, fn) -> bool:
    """A positional module whose forward takes no argument at all: caps.returns_table set, the
    call made with nothing (True); else False."""
    if adapter.comp.name != "positional" or adapter.mode not in ("class", "instance") or \
            (adapter.hooks is not None and adapter.hooks.call is not None):
        return False
    try:
        params = [p for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]
    except (TypeError, ValueError):
        return False
    if params:
        return False
    adapter.caps.returns_table = adapter.caps.table_no_input = True
    adapter.notes.append("forward takes no input and returns the positional table: called with "
                         "nothing, compared x + table[:T]; the input gradient is not checked")
    return True


def probe(adapter) -> None:
    """Set caps.returns_table for a positional module whose forward returns the table."""
    if adapter.hooks is not None and adapter.hooks.call is not None:
        return                          # the adapter file says how to call it
    if adapter.comp.name != "positional" or adapter.mode not in ("class", "instance") or \
            adapter.caps.table or adapter.caps.returns_table:
        return
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    m = adapter.finish_module(obj)
    D = adapter.probe_hyper()["d_model"]
    x = adapter.ops.from_np(np.random.default_rng(0).standard_normal((2, 3, D)).astype(adapter.opts.dtype))
    fn = adapter.call_target(m)
    res = run_limited(lambda: adapter.binding.call(fn, {"x": x}), 10.0)
    from_ids = from_length = False
    if not isinstance(res, Finished):
        ids = token_ids(x, adapter.ops)
        res = run_limited(lambda: adapter.binding.call(fn, {"x": ids}), 10.0)
        from_ids = True
    if not isinstance(res, Finished):
        res = run_limited(lambda: adapter.binding.call(fn, {"x": 3}), 10.0)
        from_ids, from_length = False, True
        if not isinstance(res, Finished) or tuple(getattr(res.value, "shape", ()))[-2:-1] != (3,):
            return                      # a table of the length asked for, or not a length at all
    shape = tuple(getattr(res.value, "shape", ()))
    if (len(shape) == 2 and shape[1] == D) or (len(shape) == 3 and shape[0] == 1 and shape[2] == D) \
            or (from_ids and repeated_table(res.value, adapter.ops, 2, D)):
        adapter.caps.returns_table = True
        if from_length:
            adapter.caps.table_from_length = True
            adapter.notes.append(f"forward takes the sequence length T (an int), not x (B, T, d), "
                                 f"and returns the positional table {shape}: called with each "
                                 f"example's T, compared x + table; the input gradient is not "
                                 f"checked")
            return
        if from_ids:
            adapter.caps.table_from_ids = True
            adapter.notes.append(f"forward takes token ids (B, T), not x (B, T, d), and returns the "
                                 f"positional table {shape}: called with token ids of each "
                                 f"example's (B, T), compared x + table; the input gradient is not "
                                 f"checked")
            return
        adapter.notes.append(f"forward returns the positional table {shape} rather than x + PE: "
                             f"compared x + table; the input gradient is not checked")


def with_token_ids(caps, values: dict, feeds: dict, ops) -> dict:
    """The call's values with x replaced by token ids, for a table computed from token ids, or by
    the sequence length T, for a table computed from the length."""
    if caps.table_from_length:
        return dict(values, x=int(feeds["x"].shape[1]))
    return dict(values, x=token_ids(feeds["x"], ops)) if caps.table_from_ids else values


def token_ids(x, ops):
    """Token ids (B, T) for an input x (B, T, d): 1, 2, ... along each row (never padding 0)."""
    B, T = int(x.shape[0]), int(x.shape[1])
    return ops.from_np(np.tile(np.arange(1, T + 1, dtype=np.int64), (B, 1)))
