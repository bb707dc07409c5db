"""The argument checks every guard of torchformer.guards is built from (the twin of
npformer.guards.validation; the framework-free rules, the same in both twins, come from
npformer.guards.rules).

Messages name the argument, what was expected and what came. Differences from npformer, on purpose:

- float inputs are not scanned for NaN/inf (that would force a device sync on every call on a GPU;
  NaN propagates as in any torch module);
- the dtype of a float input must equal the module's only outside autocast: under
  `torch.autocast` activations legitimately arrive in float16/bfloat16;
- token ids are range-checked (one small sync), because an out-of-range id on CUDA is an
  unreadable device-side assert.

Checked once, not at every level: torchformer.layers.module.Module runs a class's registered check at
the outermost call and its body under `run_checked`, where the modules it calls see `trusted()` True
and skip their own checks (their inputs are the model's own, already checked, tensors). Called
directly, every module still checks. The flag is thread-local, so one thread's model body never
switches checks off in another thread.

Under torch.compile (`torch.compiler.is_compiling()`): checks on shapes and dtypes still run (dynamo
turns them into guards: they cost nothing per call), but checks on tensor VALUES (ids in range, 0/1
integer masks) are skipped, because reading a value into Python (int(t), bool(t)) breaks the graph
and a compiled graph cannot raise on values anyway. Out-of-range ids then fail inside the compiled
embedding lookup instead of with the message here. The eager path always checks.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from npformer.guards.rules import (  # noqa: F401  (the rules both twins share, exported here too)
    check_config,
    check_config_fits_memory,
    check_count,
    check_flag,
    check_key_keep_shape,
    check_length,
    check_model_mask_shape,
    check_positive_int,
    check_probability,
    check_seed,
    format_bytes,
    random_kind,
    refuse_masked,
)
from torchformer.layers.module import FLOAT_DTYPES, compiling, to_torch_dtype


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
                shape: Sequence[int | None] | None = None, device: torch.device | None = None,
                finite: bool = True, owner: str = "the module's") -> torch.Tensor:
    """A floating tensor of the given rank and shape (None in `shape` matches any size) on `device`;
    its dtype must equal `dtype` unless autocast is active. `owner` says whose dtype and device they
    are in the message ("the module's", "q's").

    Non-finite values are rejected when `finite`, with npformer's message (NaN/inf would otherwise
    flow silently to the output), for a tensor on the CPU, where npformer runs too: one pass, as
    npformer's scan. A CUDA tensor is not scanned (reading the answer back is a device sync per
    checked call, which would stall the GPU at every stage of every forward), nor is a tensor in a
    compiled graph (like every check of tensor values)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {describe(x)}")
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name}: expected a floating tensor, got dtype {x.dtype}")
    if dtype is not None and x.dtype != dtype and not autocasting(x):
        raise TypeError(f"{name}: expected dtype {dtype} ({owner} dtype; mixed dtypes are not "
                        f"converted silently outside autocast), got {x.dtype}")
    check_device(name, x, device, owner)
    if ndim is not None and x.dim() != ndim:
        raise ValueError(f"{name}: expected {ndim} dimensions, got shape {tuple(x.shape)}")
    if shape is not None:
        ok = len(shape) == x.dim() and all(s is None or s == t for s, t in zip(shape, x.shape))
        if not ok:
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name}: expected shape {want}, got {tuple(x.shape)}")
    if finite and x.device.type == "cpu" and x.numel() and not compiling():
        with torch.no_grad():
            ok = torch.isfinite(x)
            if not bool(ok.all()):
                bad = int(ok.numel() - ok.count_nonzero())
                raise ValueError(f"{name}: expected finite values, got {bad} NaN/inf entries")
    return x


def check_device(name: str, x: torch.Tensor, device, owner: str = "the module's") -> None:
    """Refuse a float tensor on another device than `device` (None: any). Float inputs are never
    moved silently (a copy per call between host and GPU); ids and masks are small and are moved."""
    if device is None:
        return
    device = torch.device(device)
    if x.device.type != device.type or (device.index is not None and x.device.index is not None
                                        and x.device.index != device.index):
        raise ValueError(f"{name}: expected a tensor on {device} ({owner} device; move it with "
                         f".to({str(device)!r})), got one on {x.device}")


def check_device_arg(name: str, device):
    """A device argument of a constructor: None, a torch.device or a string torch.device reads, and
    for CUDA one this torch can use. Returns it unchanged."""
    if device is None:
        return device
    try:
        d = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"{name}: expected a torch device such as 'cpu', 'cuda' or 'cuda:0', got "
                         f"{device!r}") from None
    if d.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{name}: {device!r} asked for, but torch.cuda.is_available() is False "
                             f"(torch {torch.__version__}, built "
                             f"{'with' if torch.backends.cuda.is_built() else 'without'} CUDA); "
                             f"use device='cpu'")
        if d.index is not None and d.index >= torch.cuda.device_count():
            raise ValueError(f"{name}: {device!r} asked for, but {torch.cuda.device_count()} CUDA "
                             f"device(s) are visible")
    return device


def check_ids(name: str, ids, vocab_size: int, *, ndim: int | None = 2,
              device: torch.device | None = None) -> torch.Tensor:
    """Integer token ids in [0, vocab_size) of the given rank, as an int64 tensor on `device`
    (numpy arrays and lists are accepted and converted)."""
    if not isinstance(ids, torch.Tensor):
        refuse_masked(name, ids)
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


def additive_hint(mask) -> str:
    """For a float mask of only 0 and -inf (torch's additive convention, what
    nn.Transformer.generate_square_subsequent_mask returns), how to pass it; else ""."""
    if compiling():
        return ""
    try:
        m = torch.as_tensor(mask)
        if not m.dtype.is_floating_point or m.numel() == 0:
            return ""
        neg = torch.isneginf(m)
        if not bool(neg.any()) or not bool(((m == 0) | neg).all()):
            return ""
    except (TypeError, RuntimeError, NotImplementedError):
        return ""
    return ("; it holds only 0 and -inf, torch's additive convention (0 = may attend): pass "
            "`mask == 0` as the keep-mask")


def check_mask(name: str, mask, target: Sequence[int], *, device: torch.device | None = None
               ) -> torch.Tensor | None:
    """A keep-mask (bool, or 0/1 integers: nonzero = may attend) broadcastable to `target`.

    Accepts tensors and numpy arrays; returns a bool tensor on `device` (not broadcast), or None.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor):
        refuse_masked(name, mask)
        arr = np.asarray(mask)
        if arr.dtype != np.bool_ and not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{name}: expected a bool keep-mask (or 0/1 integers), got dtype "
                            f"{arr.dtype}{additive_hint(arr)}")
        mask = torch.as_tensor(arr)
    if mask.dtype != torch.bool:
        if mask.dtype.is_floating_point or mask.dtype.is_complex:
            raise TypeError(f"{name}: expected a bool keep-mask (or 0/1 integers), got dtype "
                            f"{mask.dtype}{additive_hint(mask)}")
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


def check_rng(name: str, rng):
    """A torch.Generator, a numpy.random.Generator (its draws seed torch's) or None."""
    if rng is not None and not isinstance(rng, (torch.Generator, np.random.Generator)):
        raise TypeError(f"{name}: expected a torch.Generator, a numpy.random.Generator or None, got "
                        f"{random_kind(rng)}")
    return rng


def param_device(module) -> torch.device | None:
    """The device of a module's first parameter or buffer (it follows .to()), None without any."""
    for t in module.parameters():
        return t.device
    for t in module.buffers():
        return t.device
    return None


def device_memory(device) -> int | None:
    """The bytes of a CUDA device's memory, the bound a model placed there must fit; None for the
    CPU (its arrays share this machine's memory: npformer.guards.rules.physical_memory)."""
    dev = torch.device(device)
    return torch.cuda.get_device_properties(dev).total_memory if dev.type == "cuda" else None


def param_dtype(module, default: torch.dtype) -> torch.dtype:
    """The dtype of a module's first parameter (it follows .to()/.double()), `default` without any."""
    p = next(module.parameters(), None)
    return default if p is None else p.dtype



def check_dtype(name: str, dtype) -> torch.dtype:
    """A parameter dtype: 'float32' / 'float64' / a numpy dtype / a torch float dtype; else a
    ValueError, as npformer's check_dtype refuses the same values."""
    try:
        return to_torch_dtype(dtype)
    except TypeError:
        raise ValueError(f"{name}: expected one of 'float32', 'float64' (or a torch float dtype), "
                         f"got {dtype!r}") from None

