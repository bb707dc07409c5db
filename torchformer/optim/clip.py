"""Gradient clipping with npformer's signature and refusals: torch.nn.utils.clip_grad_norm_ underneath."""
from __future__ import annotations

import math

import torch

from npformer.optim.clip import nonfinite_norm_message

__all__ = ["clip_grad_norm"]


def clip_grad_norm(params, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False) -> float:
    """torch.nn.utils.clip_grad_norm_ (coef = min(max_norm / (total + 1e-6), 1), in place); returns the
    total norm before clipping as a float. Accepts named pairs too, like npformer's.

    The same refusals and messages as npformer's: `norm_type` must be >= 1 or inf (torch itself
    accepts any p > 0, and p < 1 shrinks gradients by orders of magnitude); `error_if_nonfinite=True`
    raises RuntimeError on a NaN/inf total norm without touching the gradients."""
    if isinstance(params, torch.nn.Module):
        params = params.parameters()
    if isinstance(params, torch.Tensor):
        params = [params]
    plist = [item[1] if isinstance(item, tuple) else item for item in params]
    for i, p in enumerate(plist):
        if not isinstance(p, torch.Tensor):
            raise TypeError(f"clip_grad_norm: params[{i}]: expected a Parameter or a (name, "
                            f"Parameter) pair, got {type(p).__name__}")
    if not isinstance(error_if_nonfinite, bool):
        raise TypeError(f"clip_grad_norm: error_if_nonfinite: expected a bool, got "
                        f"{type(error_if_nonfinite).__name__}")
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)) \
            or not math.isfinite(float(max_norm)) or max_norm < 0:
        raise ValueError(f"clip_grad_norm: max_norm: expected a float >= 0, got {max_norm!r}")
    try:
        p_ = float(norm_type)
    except (TypeError, ValueError):
        p_ = float("nan")
    if not (p_ >= 1 or math.isinf(p_)) or math.isnan(p_) or isinstance(norm_type, bool):
        raise ValueError(f"clip_grad_norm: norm_type: expected a float >= 1 or inf, got {norm_type!r}")
    if not any(p.grad is not None for p in plist):
        return 0.0
    try:
        return float(torch.nn.utils.clip_grad_norm_(plist, max_norm, p_,
                                                    error_if_nonfinite=error_if_nonfinite))
    except RuntimeError as e:
        if "non-finite" in str(e):
            raise RuntimeError(nonfinite_norm_message(p_)) from None
        raise
