"""Gradient clipping by the joint norm of all gradients (torch.nn.utils.clip_grad_norm_'s rule)."""
from __future__ import annotations

import math

import numpy as np

from npformer.guards.optim import is_real
from npformer.layers.module import Module, Parameter

__all__ = ["clip_grad_norm", "check_clip_arguments", "nonfinite_norm_message"]


def check_clip_arguments(max_norm, norm_type, error_if_nonfinite) -> tuple[float, float]:
    """(max_norm, p) as floats, or the error both twins raise: max_norm a finite number >= 0,
    norm_type a number >= 1, inf or the string "inf" (as torch takes), error_if_nonfinite a bool
    (NumPy's too); never a bool for a number."""
    if not isinstance(error_if_nonfinite, (bool, np.bool_)):
        raise TypeError(f"clip_grad_norm: error_if_nonfinite: expected a bool, got "
                        f"{type(error_if_nonfinite).__name__}")
    if not is_real(max_norm) or max_norm < 0:
        raise ValueError(f"clip_grad_norm: max_norm: expected a float >= 0, got {max_norm!r}")
    number = isinstance(norm_type, (int, float, np.integer, np.floating)) and \
        not isinstance(norm_type, bool)
    p_ = float(norm_type) if number else math.inf if norm_type == "inf" else math.nan
    if not (p_ >= 1 or math.isinf(p_)) or math.isnan(p_):
        raise ValueError(f"clip_grad_norm: norm_type: expected a float >= 1 or inf, got {norm_type!r}")
    return float(max_norm), p_


def nonfinite_norm_message(norm_type: float) -> str:
    """The message both twins raise for a non-finite total norm with error_if_nonfinite=True."""
    return (f"clip_grad_norm: the total norm of order {float(norm_type)} of the gradients is "
            f"non-finite, so it cannot be clipped (a gradient holds NaN or inf); pass "
            f"error_if_nonfinite=False to clip anyway (the gradients then become NaN)")


def clip_grad_norm(params, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False) -> float:
    r"""Scale all gradients in place so their joint norm is at most `max_norm`; return the norm before.

        N    = || (||g_1||_p, ||g_2||_p, ...) ||_p      (the p-norm of all gradients as one vector)
        coef = min(max_norm / (N + 1e-6), 1)
        g_i <- coef * g_i                                 (always applied, as torch does)

    `params`: as for the optimizers (named pairs, Parameters, a Module); parameters whose grad is None
    are ignored. `norm_type` may be any p >= 1 or `inf` (p < 1 is not a norm; torch accepts it and
    shrinks gradients enormously, both twins refuse it). Gradients keep their dtype.
    `error_if_nonfinite`: as torch's: True raises RuntimeError when N is NaN or inf (gradients left
    unchanged); False (the default, as torch) scales anyway and returns the non-finite N.
    """
    if isinstance(params, Module):
        params = params.parameters()
    if isinstance(params, Parameter):
        params = [params]
    plist = [item[1] if isinstance(item, tuple) else item for item in params]
    for i, p in enumerate(plist):
        if not isinstance(p, Parameter):
            raise TypeError(f"clip_grad_norm: params[{i}]: expected a Parameter or a (name, "
                            f"Parameter) pair, got {type(p).__name__}")
    max_norm, p_ = check_clip_arguments(max_norm, norm_type, error_if_nonfinite)
    grads = [p.grad for p in plist if p.grad is not None]
    if not grads:
        return 0.0
    # per-tensor norms in each gradient's own dtype (as torch), then the norm of those norms
    norms = np.array([np.linalg.norm(g.ravel(), ord=p_) if g.size else 0.0 for g in grads],
                     dtype=np.float64)                           # (number of gradients,)
    total = float(norms.max() if math.isinf(p_) else np.linalg.norm(norms, ord=p_))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(nonfinite_norm_message(p_))
    coef = min(float(max_norm) / (total + 1e-6), 1.0)
    for g in grads:
        g *= coef                                               # in place, dtype kept
    return total
