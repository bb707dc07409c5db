"""Argument checks shared by every torchformer component (the twin of npformer/validation.py).

Messages name the argument, what was expected and what came. Differences from npformer, on purpose:

- float inputs are not scanned for NaN/inf (that would force a device sync on every call on a GPU;
  NaN propagates as in any torch module);
- the dtype of a float input must equal the module's only outside autocast: under
  `torch.autocast` activations legitimately arrive in float16/bfloat16;
- token ids are range-checked (one small sync), because an out-of-range id on CUDA is an
  unreadable device-side assert.

Checked once, not at every level. A model checks its arguments at its entry and then runs its body
under `run_checked`: the modules it calls see `trusted()` True and skip their own checks (their
inputs are the model's own, already checked, tensors). Called directly, every module still checks
(trusted() is False outside a checked body). The flag is thread-local, so one thread's model body
never switches checks off in another thread.

Under torch.compile (`torch.compiler.is_compiling()`): checks on shapes and dtypes still run (dynamo
turns them into guards: they cost nothing per call), but checks on tensor VALUES (ids in range, 0/1
integer masks) are skipped, because reading a value into Python (int(t), bool(t)) breaks the graph
and a compiled graph cannot raise on values anyway. Out-of-range ids then fail inside the compiled
embedding lookup instead of with the message here. The eager path always checks.
"""
from __future__ import annotations

import threading
from typing import Callable, Sequence

import numpy as np
import torch

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_DTYPE_NAMES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
                "bfloat16": torch.bfloat16, "float": torch.float64, "double": torch.float64,
                "single": torch.float32, "half": torch.float16}


compiling = torch.compiler.is_compiling


class _Trust(threading.local):
    active = False


TRUST = _Trust()       # TRUST.active: inside a checked call (read it through trusted(), or as Module does)


def trusted() -> bool:
    """True inside a torchformer model/module body that already checked its arguments (eager only;
    under torch.compile it is False, so shape and dtype checks are traced into guards)."""
    return TRUST.active and not compiling()      # the flag first: False almost always, and cheap


def run_checked(fn: Callable, *args, **kwargs):
    """fn(*args, **kwargs) with trusted() True inside: for a body whose arguments were just checked.
    Not a context manager on purpose: dynamo traces this plain call without a graph break."""
    if compiling() or TRUST.active:
        return fn(*args, **kwargs)
    TRUST.active = True
    try:
        return fn(*args, **kwargs)
    finally:
        TRUST.active = False


def to_torch_dtype(dtype) -> torch.dtype:
    """'float32' / 'float64' / numpy dtype / torch.dtype -> torch.dtype (floating only)."""
    if isinstance(dtype, torch.dtype):
        out = dtype
    else:
        name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
        out = _DTYPE_NAMES.get(name)
    if out not in FLOAT_DTYPES:
        raise TypeError(f"dtype: expected one of 'float32', 'float64' (or a torch float dtype), "
                        f"got {dtype!r}")
    return out


def describe(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"tensor of shape {tuple(x.shape)}, dtype {x.dtype} on {x.device}"
    if isinstance(x, np.ndarray):
        return f"numpy array of shape {x.shape} and dtype {x.dtype}"
    return type(x).__name__


def autocasting(x: torch.Tensor) -> bool:
    """True when an autocast region is active for x's device type."""
    try:
        return torch.is_autocast_enabled(x.device.type)
    except (TypeError, RuntimeError):  # pragma: no cover - device types without autocast
        return False


def check_float(name: str, x, *, dtype: torch.dtype | None = None, ndim: int | None = None,
                shape: Sequence[int | None] | None = None) -> torch.Tensor:
    """A floating tensor of the given rank and shape (None in `shape` matches any size); its dtype
    must equal `dtype` unless autocast is active."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {describe(x)}")
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name}: expected a floating tensor, got dtype {x.dtype}")
    if dtype is not None and x.dtype != dtype and not autocasting(x):
        raise TypeError(f"{name}: expected dtype {dtype} (the module's dtype; mixed dtypes are not "
                        f"converted silently outside autocast), got {x.dtype}")
    if ndim is not None and x.dim() != ndim:
        raise ValueError(f"{name}: expected {ndim} dimensions, got shape {tuple(x.shape)}")
    if shape is not None:
        ok = len(shape) == x.dim() and all(s is None or s == t for s, t in zip(shape, x.shape))
        if not ok:
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name}: expected shape {want}, got {tuple(x.shape)}")
    return x


def check_ids(name: str, ids, vocab_size: int, *, ndim: int | None = 2,
              device: torch.device | None = None) -> torch.Tensor:
    """Integer token ids in [0, vocab_size) of the given rank, as an int64 tensor on `device`
    (numpy arrays and lists are accepted and converted)."""
    if not isinstance(ids, torch.Tensor):
        arr = np.asarray(ids)
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{name}: expected integer token ids, got {describe(ids)}")
        ids = torch.as_tensor(arr)
    if ids.dtype == torch.bool or ids.dtype.is_floating_point or ids.dtype.is_complex:
        raise TypeError(f"{name}: expected integer token ids, got dtype {ids.dtype}")
    if ndim is not None and ids.dim() != ndim:
        raise ValueError(f"{name}: expected {ndim} dimensions (batch, seq), got shape "
                         f"{tuple(ids.shape)}")
    if ids.numel() and not compiling():      # a value check: skipped in a compiled graph (above)
        lo, hi = torch.aminmax(ids)
        lo, hi = int(lo), int(hi)
        if lo < 0 or hi >= vocab_size:
            raise ValueError(f"{name}: expected token ids in [0, {vocab_size}), got values in "
                             f"[{lo}, {hi}]")
    if device is not None:
        ids = ids.to(device)
    return ids.long()


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """True when an array of `shape` broadcasts to exactly `target` (numpy rules: aligned from the
    right, every dimension 1 or equal). Plain Python: torch.broadcast_shapes takes ~40x longer
    (30 us a call here), and every layer checks its masks on every call."""
    return len(shape) <= len(target) and all(
        s == 1 or s == t for s, t in zip(reversed(shape), reversed(target)))


def check_mask(name: str, mask, target: Sequence[int], *, device: torch.device | None = None
               ) -> torch.Tensor | None:
    """A keep-mask (bool, or 0/1 integers: nonzero = may attend) broadcastable to `target`.

    Accepts tensors and numpy arrays; returns a bool tensor on `device` (not broadcast), or None.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor):
        arr = np.asarray(mask)
        if arr.dtype != np.bool_ and not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{name}: expected a bool keep-mask (or 0/1 integers), got dtype "
                            f"{arr.dtype}")
        mask = torch.as_tensor(arr)
    if mask.dtype != torch.bool:
        if mask.dtype.is_floating_point or mask.dtype.is_complex:
            raise TypeError(f"{name}: expected a bool keep-mask (or 0/1 integers), got dtype "
                            f"{mask.dtype}")
        if mask.numel() and not compiling():  # a value check: skipped in a compiled graph
            lo, hi = torch.aminmax(mask)
            if int(lo) < 0 or int(hi) > 1:
                raise ValueError(f"{name}: expected 0/1 integer values, got values in "
                                 f"[{int(lo)}, {int(hi)}]")
        mask = mask != 0
    if not broadcasts_to(tuple(mask.shape), tuple(target)):
        raise ValueError(f"{name}: expected a shape broadcastable to {tuple(target)} "
                         f"(batch, heads, q_len, k_len), got {tuple(mask.shape)}")
    if device is not None and mask.device != torch.device(device):
        mask = mask.to(device)
    return mask


def check_length(name: str, length: int, max_len: int) -> None:
    if length > max_len:
        raise ValueError(f"{name}: expected a sequence length <= max_len={max_len}, got {length}")


def check_rng(name: str, rng):
    """A torch.Generator, a numpy.random.Generator (its draws seed torch's) or None."""
    if rng is not None and not isinstance(rng, (torch.Generator, np.random.Generator)):
        raise TypeError(f"{name}: expected a torch.Generator, a numpy.random.Generator or None, got "
                        f"{type(rng).__name__}")
    return rng


def check_probability(name: str, p) -> float:
    """A drop probability in [0, 1) (p = 1 would drop everything and divide by zero)."""
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name}: expected a float in [0, 1), got {type(p).__name__}")
    if not 0.0 <= float(p) < 1.0:
        raise ValueError(f"{name}: expected a float in [0, 1), got {p!r}")
    return float(p)


def check_positive_int(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name}: expected a positive int, got {v!r}")
    return int(v)


def param_dtype(module, default: torch.dtype) -> torch.dtype:
    """The dtype of a module's first parameter (it follows .to()/.double()), `default` without any."""
    p = next(module.parameters(), None)
    return default if p is None else p.dtype


class StrictLoad:
    """Mixin (before nn.Module) making load_state_dict all-or-nothing, with npformer's checks and
    messages (npformer.guards.state.check_state_dict): missing / unexpected keys (strict), wrong shapes,
    complex, string, bool or object values and ragged lists are refused before any parameter is
    written (torch's own copies matching keys first, warns on complex and fails unclearly on a
    list or a string array). numpy arrays and lists are accepted as values."""

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        from npformer.layers.module import Module as NpModule  # npformer.guards.state
        from npformer.layers.module import registered
        own = {k: tuple(v.shape) for k, v in torch.nn.Module.state_dict(self).items()}
        staged = registered("load_state_dict", NpModule)(type(self).__name__, own, state_dict, strict)
        state = {k: v if isinstance(v, torch.Tensor) else torch.from_numpy(np.array(v))
                 for k, v in staged.items()}
        return torch.nn.Module.load_state_dict(self, state, strict=strict, assign=assign)
