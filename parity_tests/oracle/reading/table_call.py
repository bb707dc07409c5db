"""Running a positional table function f(length, d_model) -> (length, d_model) on one example: the
oracle compares out = x + table[:T] (the function never sees x). A function taking the table's
shape as one argument (`generate_pos_encodings(shape)`, `sinusoid_table(size)`: its one parameter
named for a shape) is called with (T, d_model)."""
from __future__ import annotations

import numpy as np

from ..components import Case
from ..core.options import CandidateProblem
from . import naming


def execute_table(adapter, inst, case: Case, produced, name: str, mark_missing):
    """Positional table function f(length, d_model) -> (length, d_model): out = x + table, written
    into `produced` (execute.Produced), which is returned; `name` is the candidate's for messages,
    `mark_missing(case, produced, why)` records the quantities a table function cannot give."""
    T, D = case.inputs["x"].shape[1], case.hyper["d_model"]
    shape_arg = takes_shape(inst.call) if inst.call is not None else None
    if inst.obj is not None and inst.call is None:      # a factory already returned the table
        table = inst.obj
    elif shape_arg is not None:
        table = inst.call(**{shape_arg: (T, D)})
    else:
        b = naming.bind(inst.call, [("max_len", naming.HYPER_ALIASES["max_len"], False),
                                    ("d_model", naming.HYPER_ALIASES["d_model"], False)],
                        what=f"{name}(...)")
        vals = {"max_len": T, "d_model": D}
        table = b.call(inst.call, vals)
    t = adapter.ops.to_np(table)
    t = t.reshape(t.shape[-2:]) if t.ndim == 3 and t.shape[0] == 1 else t
    if t.ndim != 2 or t.shape[0] < T or t.shape[1] != D:
        raise CandidateProblem("wrong_shape", f"the positional table function returned shape "
                               f"{tuple(np.shape(t))}; expected ({T}, {D}) (length, d_model)",
                               quantity="output")
    x = case.inputs["x"].astype(adapter.opts.dtype)
    produced.values["output"] = x + t[:T].astype(adapter.opts.dtype)
    produced.dtypes["output"] = adapter.opts.dtype     # made from integers: no input dtype to keep
    mark_missing(case, produced, "a table function has no input gradient (x + table)")
    produced.notes["output"] = "table function: compared x + table[:T]" + (
        f" (called with {shape_arg}=(T, d_model))" if shape_arg else "")
    return produced


SHAPE_NAMES = ("shape", "size", "sizes", "dims", "dimensions")


def takes_shape(fn) -> str | None:
    """The name of a table function's one required parameter when it is named for a shape
    (`shape`, `table_shape`, `size`), None otherwise."""
    sig = naming.signature_of(fn)
    if sig is None:
        return None
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
              and p.default is p.empty]
    if len(params) != 1:
        return None
    name = params[0].name.lower()
    return params[0].name if name in SHAPE_NAMES or name.endswith("_shape") else None

