"""Torch-side helpers: deterministic numerics, array <-> tensor, the device the suite runs on.

`deterministic_torch()` turns TF32 off (it would change float32 matmuls on Ampere+ GPUs by ~1e-3) and
asks for full-precision float32 matmuls; the parity runner calls it before every comparison.
NPFORMER_PARITY_DEVICE=cuda runs the torch twin on the GPU (default cpu).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

DEVICE_ENV = "NPFORMER_PARITY_DEVICE"


def deterministic_torch() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def parity_device() -> torch.device:
    name = os.environ.get(DEVICE_ENV, "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"{DEVICE_ENV}={name} but torch.cuda.is_available() is False")
    return torch.device(name)


def torch_dtype(dtype) -> torch.dtype:
    name = str(getattr(dtype, "name", None) or dtype).replace("torch.", "")
    try:
        return {"float32": torch.float32, "float64": torch.float64}[name]
    except KeyError:
        raise ValueError(f"torch_dtype: expected float32 or float64, got {dtype!r}") from None


def to_tensor(x: Any, device=None, requires_grad: bool = False):
    """numpy -> torch, keeping dtype (ints become int64, bools stay bool); None stays None.

    Float arrays become fresh leaf tensors (requires_grad as asked); everything is copied, so
    nothing the torch side does can touch the numpy arrays.
    """
    if x is None or isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (bool, int, float, str)):
        return x
    a = np.asarray(x)
    device = device or parity_device()
    if a.dtype == np.bool_:
        return torch.tensor(a, dtype=torch.bool, device=device)
    if np.issubdtype(a.dtype, np.integer):
        return torch.tensor(a, dtype=torch.int64, device=device)
    t = torch.tensor(a, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def to_numpy(t: Any) -> Any:
    """torch -> numpy (detached, CPU); tuples/lists/dicts elementwise; other values unchanged."""
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    if isinstance(t, (tuple, list)):
        return type(t)(to_numpy(v) for v in t)
    if isinstance(t, dict):
        return {k: to_numpy(v) for k, v in t.items()}
    return t
