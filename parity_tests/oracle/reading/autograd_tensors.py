"""Code built on a reverse-mode autograd of its own (a micrograd-style `Tensor` over NumPy: `.data`
an array, `.grad`, operators that record the graph, `backward(grad)`), with layers that take and
return such tensors and have no backward method: NumPy's path handed them arrays, their first
operation met an array where it wanted its `Tensor`, and the verdict was RAISED or WRONG_TYPE.

The tensor class is found in the candidate's module (its globals, the names its code imports),
or, where none is there, in the packages of the submission's own it imports whole (`import npg`,
parameters `npg.Tensor`): one class, not NumPy's nor torch's, defining `backward`, `__add__`,
`__mul__` and `__matmul__`, whose instances hold their values under `.data`. The check then runs NumPy's path with
`AutogradOps`: each float input is handed over as a leaf of that class (`Tensor(x,
requires_grad=True)`, the check's dtype passed where the constructor takes one), masks stay arrays,
what comes back is read from `.data`; the backward seeds the output with the drawn upstream
gradient (`out.backward(dout)`; for a `backward()` taking no gradient, `out.grad = dout` first,
or, for one that seeds ones itself, the scalar `(out * dout).sum()` of its own operators)
after clearing every gradient the candidate holds (zeroed in place where it is an array), and
reads each input's `.grad`. Parameters are the tensors the object holds, their gradients their `.grad`, as
for npformer-style Parameters. A library that computes in float32 whatever it is given shows it
in the output's dtype: check it with `--dtype float32`.
"""
from __future__ import annotations

import inspect
import os
import sys
import types

import numpy as np

OPERATORS = ("backward", "__add__", "__mul__", "__matmul__")


def _is_tensor_class(c) -> bool:
    if not isinstance(c, type) or issubclass(c, np.ndarray) or c.__module__.split(".")[0] in (
            "numpy", "torch", "builtins", "jax", "tensorflow"):
        return False
    if not all(callable(getattr(c, m, None)) for m in OPERATORS):
        return False
    try:
        params = list(inspect.signature(c).parameters)
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0] in ("data", "value", "values", "array", "x", "arr")


def tensor_class(loaded):
    """The candidate's autograd tensor class (see the module docstring), or None."""
    obj = loaded.obj
    klass = obj if isinstance(obj, type) else type(obj)
    if loaded.backward is not None or (inspect.isclass(obj) and callable(getattr(klass, "backward", None))):
        return None
    g = vars(loaded.module) if loaded.module is not None else {}
    found = {id(v): v for v in g.values() if _is_tensor_class(v)}
    if not found:                      # `import npg`, its parameters `npg.Tensor`s: one level down
        found = {id(v): v for m in g.values() if _own_module(m)
                 for v in list(vars(m).values()) if _is_tensor_class(v)}
    return next(iter(found.values())) if len(found) == 1 else None


def _own_module(m) -> bool:
    """A module of the submission's own (a package it imports whole, `import npg`): not one
    installed with Python or in site-packages, whose classes are never the candidate's tensor."""
    if not isinstance(m, types.ModuleType):
        return False
    path = os.path.realpath(getattr(m, "__file__", None) or "/")
    installed = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return "site-packages" not in path and "dist-packages" not in path and \
        not any(path.startswith(p + os.sep) for p in installed) and path != os.path.realpath("/")


class AutogradOps:
    """NumPy's operations with inputs as leaves of the candidate's autograd tensor class."""

    name = "numpy"

    def __init__(self, tensor_cls) -> None:
        self.cls = tensor_cls
        self.leaves: list = []
        self.output = None

    def upstream(self, d):
        return d

    def is_array(self, x) -> bool:
        return isinstance(x, (np.ndarray, self.cls))

    def to_np(self, x) -> np.ndarray:
        if isinstance(x, self.cls):
            if self.output is None and all(x is not leaf for leaf in self.leaves):
                self.output = x                 # the first result read back is the output
            return np.array(x.data, copy=True)
        return np.array(x, copy=True)

    def leaf(self, a: np.ndarray, grad: bool):
        if not np.issubdtype(a.dtype, np.floating):
            return np.array(a, copy=True)       # token ids, lengths: as they are
        if self.output is not None:             # a new call: its own leaves and output
            self.leaves, self.output = [], None
        t = self._tensor(a)
        self.leaves.append(t)
        return t

    def _tensor(self, a: np.ndarray):
        kwargs = {}
        params = inspect.signature(self.cls).parameters
        if "requires_grad" in params:
            kwargs["requires_grad"] = True
        if "dtype" in params:
            kwargs["dtype"] = a.dtype
        t = self.cls(np.array(a, copy=True), **kwargs)
        if getattr(t, "requires_grad", True) is False:
            t.requires_grad = True
        return t

    def feed(self, leaf):
        return leaf                             # the very leaf: its .grad is the input's gradient

    def from_np(self, a: np.ndarray):
        """Float arrays (a probe's inputs) as tensors of the class; masks and ids as arrays."""
        a = np.asarray(a)
        return self._tensor(a) if np.issubdtype(a.dtype, np.floating) else np.array(a, copy=True)

    def dtype_name(self, x) -> str:
        return str(getattr(getattr(x, "data", x), "dtype", type(x).__name__))

    def backward(self, obj):
        """backward(dout) for the last call of `obj`: the input gradients, in the inputs' order."""
        def run(dout):
            out = self.output
            if out is None:
                raise TypeError("the candidate returned no tensor of its autograd class")
            for t in _held_tensors(obj, self.cls) + self.leaves:
                _clear(t)
            if _takes_no_gradient(out.backward):
                seeded_backward(out, dout, self._tensor)
            else:
                try:
                    out.backward(np.array(dout, copy=True))
                except TypeError:
                    out.backward(self.cls(np.array(dout, copy=True)))
            return tuple(None if leaf.grad is None else np.asarray(getattr(leaf.grad, "data", leaf.grad))
                         for leaf in self.leaves)
        return run


def _held_tensors(obj, cls, depth: int = 0, seen=None) -> list:
    """The tensors of class `cls` the object holds (attributes, lists, tuples, dicts; 8 deep)."""
    seen = set() if seen is None else seen
    if obj is None or id(obj) in seen or depth > 8:
        return []
    seen.add(id(obj))
    if isinstance(obj, cls):
        return [obj]
    if isinstance(obj, dict):
        items = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        items = list(obj)
    elif hasattr(obj, "__dict__") and not inspect.isclass(obj) and not inspect.ismodule(obj):
        items = list(vars(obj).values())
    else:
        return []
    return [t for v in items for t in _held_tensors(v, cls, depth + 1, seen)]


def given_backward(hooks, ops, obj):
    """The backward(dout) the check is given for a module without its own: the adapter file's
    `backward` hook, else the autograd of the candidate's tensors (AutogradOps); None otherwise."""
    if hooks is not None and hooks.backward is not None:
        return lambda d: hooks.backward(obj, d)
    return ops.backward(obj) if isinstance(ops, AutogradOps) else None


def _clear(t) -> None:
    """Forget a tensor's gradient: zeros in place where it is an array (a class whose operators
    accumulate with `grad += ...` from zeros made at construction), else None."""
    g = getattr(t, "grad", None)
    if isinstance(g, np.ndarray) and g.flags.writeable:
        g[...] = 0
    else:
        t.grad = None


def _takes_no_gradient(backward) -> bool:
    """A `backward()` with no parameter at all: the caller seeds the output's `.grad` first."""
    try:
        return not inspect.signature(backward).parameters
    except (TypeError, ValueError):
        return False


def seeded_backward(out, dout, make=None) -> None:
    """`out.grad = dout; out.backward()`, for a class whose backward takes no gradient. A class that
    seeds its output itself (ones, micrograd's scalar loss; found on a throwaway graph first, as
    such code may cut its graph once walked) is differentiated through a scalar of its own
    operators, `(out * make(dout)).sum().backward()`, when it has `sum`; the output's gradient
    must then be exactly the drawn one (rounded to the dtype the class keeps its gradients in: npg
    accumulates them in float32 whatever it is given), else (and without `sum`) it is refused."""
    seed = np.array(dout, dtype=np.asarray(out.data).dtype, copy=True)
    if make is not None and not _keeps_seed(type(out), make) and callable(getattr(out, "sum", None)):
        (out * make(seed)).sum().backward()
        got = _values(out.grad)
        if isinstance(got, np.ndarray) and got.shape == seed.shape and \
                np.array_equal(got, seed.astype(got.dtype)):   # at the precision it keeps grads in
            return
        raise TypeError("the candidate's Tensor.backward() takes no gradient and seeds its own "
                        "output, and the scalar (out * upstream).sum() of its own operators did not "
                        "hand the output the drawn upstream gradient")
    out.grad = seed.copy()
    out.backward()
    if not (isinstance(out.grad, np.ndarray) and np.array_equal(out.grad, seed)):
        raise TypeError("the candidate's Tensor.backward() takes no gradient and sets the "
                        "output's own: the drawn upstream gradient cannot be handed to it")


_SEED_KEPT: dict = {}


def _values(g):
    """A gradient's array: itself, or the `.data` of a tensor of the candidate's class."""
    return g if isinstance(g, np.ndarray) else getattr(g, "data", g)


def _keeps_seed(cls, make) -> bool:
    """Whether `t.grad = g; t.backward()` hands `g` on, on a product of two small tensors of the
    class (True where the probe itself fails: the seeded path then reports what it meets)."""
    if cls not in _SEED_KEPT:
        try:
            a = make(np.array([1.0, 2.0]))
            b = a * make(np.array([3.0, 3.0]))
            _clear(a)
            b.grad = np.array([5.0, 7.0])
            b.backward()
            got = np.asarray(_values(a.grad), dtype=float)
            _SEED_KEPT[cls] = bool(np.allclose(got, [15.0, 21.0]))
        except Exception:   # noqa: BLE001 - any failure of the candidate's class: keep the seeded path
            _SEED_KEPT[cls] = True
    return _SEED_KEPT[cls]
