"""Code built on a reverse-mode autograd of its own (a micrograd-style `Tensor` over NumPy: `.data`
an array, `.grad`, operators that record the graph, `backward(grad)`), with layers that take and
return such tensors and have no backward method: NumPy's path handed them arrays, their first
operation met an array where it wanted its `Tensor`, and the verdict was RAISED or WRONG_TYPE.

The tensor class is found in the candidate's module (its globals, the names its code imports):
one class, not NumPy's nor torch's, defining `backward`, `__add__`, `__mul__` and `__matmul__`,
whose instances hold their values under `.data`. The check then runs NumPy's path with
`AutogradOps`: each float input is handed over as a leaf of that class (`Tensor(x,
requires_grad=True)`, the check's dtype passed where the constructor takes one), masks stay arrays,
what comes back is read from `.data`; the backward seeds the output with the drawn upstream
gradient (`out.backward(dout)`; for a `backward()` taking no gradient, `out.grad = dout` first)
after clearing every gradient the candidate holds (zeroed in place where it is an array), and
reads each input's `.grad`. Parameters are the tensors the object holds, their gradients their `.grad`, as
for npformer-style Parameters. A library that computes in float32 whatever it is given shows it
in the output's dtype: check it with `--dtype float32`.
"""
from __future__ import annotations

import inspect

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
    return next(iter(found.values())) if len(found) == 1 else None


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
                seeded_backward(out, dout)
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


def seeded_backward(out, dout) -> None:
    """`out.grad = dout; out.backward()`, for a class whose backward takes no gradient; one that
    seeds its output itself (ones, micrograd's scalar loss) cannot be handed the drawn one."""
    seed = np.array(dout, dtype=np.asarray(out.data).dtype, copy=True)
    out.grad = seed.copy()
    out.backward()
    if not (isinstance(out.grad, np.ndarray) and np.array_equal(out.grad, seed)):
        raise TypeError("the candidate's Tensor.backward() takes no gradient and sets the "
                        "output's own: the drawn upstream gradient cannot be handed to it")
