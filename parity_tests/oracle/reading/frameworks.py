"""Frameworks: NumPy or torch, told from what the candidate's code refers to; the small set of
operations the adapter needs on each (arrays in, arrays out, leaves that collect gradients)."""
from __future__ import annotations

import inspect
import sys
from typing import Any

import numpy as np

from ..core.options import Options
from . import autograd_tensors
from .loader import Loaded


class NumpyOps:
    name = "numpy"

    def upstream(self, d):
        return d

    def is_array(self, x) -> bool:
        return isinstance(x, np.ndarray)

    def to_np(self, x) -> np.ndarray:
        if hasattr(x, "detach") and hasattr(x, "cpu"):
            return x.detach().cpu().numpy().copy()
        return np.array(x, copy=True)

    def leaf(self, a: np.ndarray, grad: bool):
        return a.copy()

    def feed(self, leaf):
        return leaf.copy()

    def from_np(self, a: np.ndarray):
        return a.copy()

    def dtype_name(self, x) -> str:
        return str(getattr(x, "dtype", type(x).__name__)).replace("torch.", "")


class TorchOps(NumpyOps):
    name = "torch"

    def __init__(self) -> None:
        import torch
        self.torch = torch

    def is_array(self, x) -> bool:
        return isinstance(x, self.torch.Tensor)

    def leaf(self, a: np.ndarray, grad: bool):
        t = self.torch.from_numpy(np.ascontiguousarray(a).copy())
        if grad:
            t.requires_grad_(True)
        return t

    def feed(self, leaf):
        # a non-leaf copy: the candidate may even modify it in place (the oracle notices), and
        # gradients still reach the leaf
        return leaf.clone()

    def from_np(self, a: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(a).copy())


class TensorOps(NumpyOps):
    """The NumPy path (a hand-written backward(dout), weights read from attributes) for a plain
    class computing with torch tensors: inputs, masks and the upstream gradient handed over as CPU
    tensors of the check's dtype; what comes back is read with .detach().cpu().numpy()."""

    def __init__(self) -> None:
        import torch
        self.torch = torch

    def is_array(self, x) -> bool:
        return isinstance(x, (np.ndarray, self.torch.Tensor))

    def leaf(self, a: np.ndarray, grad: bool):
        return self.from_np(a)

    def feed(self, leaf):
        return leaf.clone()

    def from_np(self, a: np.ndarray):
        return self.torch.from_numpy(np.array(a, copy=True, order="C"))

    def upstream(self, d):
        from .upstream_layout import upstream_tensor  # its layout kept, a broadcast as an expanded one
        return upstream_tensor(self.torch, d, d.dtype)


def plain_tensor_class(obj, module=None) -> bool:
    """A class (or instance) that is no torch.nn.Module, has a backward of its own and whose code
    uses torch: layers written by hand over torch tensors."""
    torch = torch_loaded()
    klass = obj if isinstance(obj, type) else type(obj)
    if torch is None or issubclass(klass, torch.nn.Module) or klass.__module__ == "builtins" or \
            not callable(getattr(klass, "backward", None)) or not callable(getattr(klass, "forward", None)):
        return False
    mod = module or inspect.getmodule(klass)
    g = vars(mod) if mod is not None else {}
    return (_framework_of_names(_names_used(klass, g), g) or _framework_of_names(set(g), g)) == "torch"


def ops_for(framework: str, loaded: Loaded, opts: Options):
    """The operations for a check: torch's, NumPy's, NumPy's over torch tensors (TensorOps), or
    NumPy's with inputs as leaves of the candidate's own autograd tensors (autograd_tensors.py)."""
    if framework == "numpy" and opts.framework == "auto" and \
            (tensor_cls := autograd_tensors.tensor_class(loaded)) is not None:
        return autograd_tensors.AutogradOps(tensor_cls)      # an autograd of the candidate's own
    if framework == "torch":
        ops = TorchOps()
    elif framework == "numpy" and opts.framework == "auto" and loaded.backward is None and \
            plain_tensor_class(loaded.obj, loaded.module):
        ops = TensorOps()
    else:
        return NumpyOps()
    default_dtype(ops, opts.dtype)
    return ops


def default_dtype(ops: TorchOps, dtype: str) -> None:
    """Make the check's dtype torch's default in the submission's worker (its own process), so that
    tensors the candidate makes itself (a positional table built with torch.zeros / torch.arange in
    __init__, a buffer, an accumulator in forward) have the precision of its inputs, as they would
    had its author run it in that dtype: a float32 table in a float64 check differs from the
    reference by float32 rounding (1e-8), which is not a bug. Only in the worker (its own process,
    started with python -I)."""
    if not sys.flags.isolated:
        return          # not the worker (python -I): a Python object checked in-process, whose
                        # caller's torch default is not the oracle's to change
    torch = ops.torch
    want = getattr(torch, dtype, None)
    if want in (torch.float32, torch.float64) and torch.get_default_dtype() != want:
        torch.set_default_dtype(want)


def torch_loaded() -> Any:
    return sys.modules.get("torch")


def detect_framework(loaded: Loaded, opts: Options) -> str:
    if opts.framework != "auto":
        return opts.framework
    if loaded.backward is not None or plain_tensor_class(loaded.obj, loaded.module):
        return "numpy"           # a hand-written backward: the NumPy path (TensorOps for tensors)
    torch = torch_loaded()
    obj = loaded.obj
    if torch is not None:
        if isinstance(obj, torch.nn.Module) or (isinstance(obj, type)
                                                and issubclass(obj, torch.nn.Module)):
            return "torch"
    mod = loaded.module or inspect.getmodule(obj)
    g = vars(mod) if mod is not None else {}
    verdict = _framework_of_names(_names_used(obj, g), g)
    if verdict is None:   # the code itself names neither: go by what the module imports
        verdict = _framework_of_names(set(g), g) or "numpy"
    return verdict


def _framework_of_names(names: set[str], g: dict) -> str | None:
    found = set()
    for name in names:
        v = g.get(name)
        modname = getattr(v, "__name__", "") if inspect.ismodule(v) else getattr(v, "__module__", "")
        if not isinstance(modname, str):
            continue
        if modname == "torch" or modname.startswith("torch."):
            found.add("torch")
        elif modname == "numpy" or modname.startswith("numpy."):
            found.add("numpy")
    if "torch" in found:
        return "torch"
    return "numpy" if found else None


def _names_used(obj, g: dict | None = None, depth: int = 0) -> set[str]:
    """Global names the code of a function (or a class's methods) refers to, following functions
    and classes of the same module it calls (a helper that does the real work)."""
    codes = []
    if inspect.isclass(obj):
        for klass in obj.__mro__:
            if klass.__module__ in ("builtins",):
                continue
            for v in vars(klass).values():
                f = getattr(v, "__func__", v)
                if inspect.isfunction(f):
                    codes.append(f.__code__)
    elif inspect.isfunction(obj):
        codes.append(obj.__code__)
    names: set[str] = set()
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        codes.extend(k for k in c.co_consts if inspect.iscode(k))
    if g is not None and depth < 3:
        home = getattr(obj, "__module__", None)
        for n in list(names):
            v = g.get(n)
            if v is not obj and (inspect.isfunction(v) or inspect.isclass(v)) and \
                    getattr(v, "__module__", None) == home:
                names |= _names_used(v, g, depth + 1)
    return names
