"""Recogniser: scaled dot-product attention written for (batch*heads, T, d) tensors (torch.bmm, as in
d2l's DotProductAttention; NumPy code computing `K.transpose(0, 2, 1)`; code asserting
`Q.dim() == 3`; `np.einsum("bqd,bkd->bqk", q, k)`). Found by a probe when the adapter is
prepared, only for code that calls bmm, reorders exactly three axes (`.transpose(0, 2, 1)`,
`.permute(0, 2, 1)`), compares a tensor's number of axes with 3 (`x.dim() == 3`, `x.ndim == 3`,
`len(x.shape) == 3`) or spells an einsum with three axes per operand, read from its text or
from the same module's functions it calls: a call on (B, H, T, d) inputs raises, the same call on (B*H, T, d) inputs
returns (B*H, T, d_v). The oracle then merges the batch and head axes of q, k, v and of the mask on the way in and
splits them on the way out; gradients flow back through the reshape.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np

from ..calls import Finished, run_limited


def merge(a):
    """(B, H, T, d) -> (B*H, T, d) (numpy array or torch tensor)."""
    return a.reshape((a.shape[0] * a.shape[1],) + tuple(a.shape[2:]))


def split(a, shape):
    """(B*H, ...) -> shape (B, H, ...)."""
    return a.reshape(tuple(shape))


def probe(adapter) -> None:
    """Set caps.bh_layout when the candidate only works on merged batch*heads tensors."""
    if adapter.hooks is not None and adapter.hooks.call is not None:
        return                          # the adapter file says how to call it
    if adapter.comp.name != "sdpa" or adapter.mode not in ("function", "class", "instance"):
        return
    from ..frameworks import _names_used
    mod = adapter.source_module()
    names = _names_used(adapter.obj, vars(mod) if mod else None)
    helpers = [adapter.obj] + [v for n, v in (vars(mod) if mod else {}).items() if n in names]
    if not {"bmm", "baddbmm"} & names and not any(three_axis_code(h) for h in helpers):
        return                          # only batched-matrix code needs merged axes: no probe
    obj = adapter.probe if adapter.mode == "class" else adapter.obj
    if obj is None:
        return
    if adapter.mode != "function":
        obj = adapter.finish_module(obj)
    fn = obj
    ops = adapter.ops
    rng = np.random.default_rng(0)
    B, H, T, d = 2, 3, 4, 2
    arrays = {n: rng.standard_normal((B, H, T, d)).astype(adapter.opts.dtype) for n in ("q", "k", "v")}

    def attempt(shaped):
        vals = {n: ops.from_np(a) for n, a in shaped.items()}
        vals.update({m.name: None for m in adapter.comp.masks})
        if adapter.caps.list_input:
            from .list_input import SOURCE
            vals[SOURCE] = [vals["q"], vals["k"], vals["v"]]
        return run_limited(lambda: adapter.binding.call(fn, vals), 10.0)

    if isinstance(attempt(arrays), Finished):
        return
    res = attempt({n: merge(a) for n, a in arrays.items()})
    if not isinstance(res, Finished):
        return
    out = res.value[0] if isinstance(res.value, (tuple, list)) else res.value
    if tuple(getattr(out, "shape", ())) == (B * H, T, d):
        adapter.caps.bh_layout = True
        adapter.notes.append("the candidate takes (batch*heads, T, d) tensors (a call on "
                             "(batch, heads, T, d) raised): q, k, v and masks are handed over "
                             "with batch and heads merged, outputs split back")


def three_axis_code(obj) -> bool:
    """Whether the text of `obj` (a function or a class; the candidate and the same module's
    functions it calls) is written for 3-axis tensors: it reorders exactly three axes by constants
    (`x.transpose(0, 2, 1)`, `x.permute(0, 2, 1)`), compares a number of axes with 3
    (`assert q.dim() == 3`, `x.ndim != 3`, `len(x.shape) == 3`) or spells an einsum with three
    axes per operand (`einsum("bqd,bkd->bqk", q, k)`)."""
    if inspect.isclass(obj):                    # its own code and its bases' (a subclass's forward)
        return any(_text_is_three_axis(c) for c in obj.__mro__
                   if c.__module__.split(".")[0] not in ("builtins", "torch", "numpy"))
    return inspect.isfunction(obj) and _text_is_three_axis(obj)


def _text_is_three_axis(obj) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return False
    return any(_reorders_three(n) or _counts_three_axes(n) or _einsum_three(n) for n in ast.walk(tree))


def _einsum_three(n) -> bool:
    """`np.einsum("bqd,bkd->bqk", q, k)` (any module's einsum): every operand and the result
    spelt with exactly three axes, no `...` to take a head axis."""
    if not (isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant)
            and isinstance(n.args[0].value, str)):
        return False
    f = n.func
    if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) != "einsum":
        return False
    spec = n.args[0].value.replace(" ", "")
    terms = spec.replace("->", ",").split(",")
    return "->" in spec and all(len(t) == 3 and t.isalpha() for t in terms)


def _reorders_three(n) -> bool:
    return (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("transpose", "permute") and len(n.args) == 3
            and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in n.args))


def _axis_count(e) -> bool:
    """`x.dim()`, `x.ndim`, `x.ndimension()` or `len(x.shape)`."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and not e.args:
        return e.func.attr in ("dim", "ndimension")
    if isinstance(e, ast.Attribute):
        return e.attr == "ndim"
    return (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len"
            and len(e.args) == 1 and isinstance(e.args[0], ast.Attribute)
            and e.args[0].attr == "shape")


def _counts_three_axes(n) -> bool:
    if not isinstance(n, ast.Compare) or len(n.ops) != 1 or \
            not isinstance(n.ops[0], (ast.Eq, ast.NotEq)):
        return False
    left, right = n.left, n.comparators[0]
    return (_axis_count(left) and _is_three(right)) or (_is_three(left) and _axis_count(right))


def _is_three(e) -> bool:
    return isinstance(e, ast.Constant) and e.value == 3
