"""Gradient clipping with npformer's signature and refusals: torch.nn.utils.clip_grad_norm_ underneath."""
from __future__ import annotations

import torch

from npformer.optim.clip import check_clip_arguments, nonfinite_norm_message

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
    max_norm, p_ = check_clip_arguments(max_norm, norm_type, error_if_nonfinite)
    if not any(p.grad is not None for p in plist):
        return 0.0
    try:
        return float(torch.nn.utils.clip_grad_norm_(plist, max_norm, p_,
                                                    error_if_nonfinite=bool(error_if_nonfinite)))
    except RuntimeError as e:
        if "non-finite" in str(e):
            raise RuntimeError(nonfinite_norm_message(p_)) from None
        raise
