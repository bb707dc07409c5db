"""Optimizers, warm-up schedule and gradient clipping for torchformer: torch.optim itself.

`SGD`, `Adam` and `AdamW` are `torch.optim`'s classes, re-exported: npformer.optim.optimizers reproduces their
update rules, and the parity suite checks that. `warmup_lr`, `WarmupSchedule` and `clip_grad_norm`
have npformer's signatures. `WarmupSchedule` is a `torch.optim.lr_scheduler.LambdaLR` whose rate does
not depend on the optimizer's initial lr (LambdaLR with base lr 1.0), as in npformer.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch.optim import SGD, Adam, AdamW, Optimizer
from torch.optim.lr_scheduler import LambdaLR

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "warmup_lr", "WarmupSchedule", "clip_grad_norm"]


def warmup_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    r"""The paper's rate: factor * d_model^{-1/2} * min(s^{-1/2}, s * warmup_steps^{-3/2}), s = max(step, 1)."""
    for name, v in (("step", step), ("d_model", d_model), ("warmup_steps", warmup_steps)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"warmup_lr: {name}: expected an int, got {type(v).__name__}")
    if step < 0:
        raise ValueError(f"warmup_lr: step: expected an int >= 0, got {step}")
    if d_model < 1:
        raise ValueError(f"warmup_lr: d_model: expected a positive int, got {d_model}")
    if warmup_steps < 1:
        raise ValueError(f"warmup_lr: warmup_steps: expected a positive int, got {warmup_steps}")
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) \
            or factor < 0:
        raise ValueError(f"warmup_lr: factor: expected a float >= 0, got {factor!r}")
    s = max(step, 1)
    return float(factor) * d_model ** -0.5 * min(s ** -0.5, s * warmup_steps ** -1.5)


class _WarmupLambda:
    """Callable object (not a lambda) so LambdaLR.state_dict() saves its constants."""

    def __init__(self, d_model: int, warmup_steps: int, factor: float) -> None:
        self.d_model, self.warmup_steps, self.factor = int(d_model), int(warmup_steps), float(factor)

    def __call__(self, last_epoch: int) -> float:
        return warmup_lr(last_epoch + 1, self.d_model, self.warmup_steps, self.factor)


class WarmupSchedule(LambdaLR):
    """LambdaLR with lr = warmup_lr(last_epoch + 1, d_model, warmup_steps, factor), independent of the
    optimizer's lr at construction (it is overwritten; scale with `factor`)."""

    def __init__(self, optimizer: Optimizer, d_model: int, warmup_steps: int,
                 factor: float = 1.0) -> None:
        warmup_lr(1, d_model, warmup_steps, factor)             # validates the arguments
        super().__init__(optimizer, _WarmupLambda(d_model, warmup_steps, factor))

    def get_lr(self) -> list[float]:
        # LambdaLR multiplies by base_lrs; the schedule is absolute (base lr 1.0)
        return [lmbda(self.last_epoch) for lmbda in self.lr_lambdas]

    @property
    def d_model(self) -> int:
        return self.lr_lambdas[0].d_model

    @property
    def warmup_steps(self) -> int:
        return self.lr_lambdas[0].warmup_steps

    @property
    def factor(self) -> float:
        return self.lr_lambdas[0].factor


def clip_grad_norm(params, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False) -> float:
    """torch.nn.utils.clip_grad_norm_ (coef = min(max_norm / (total + 1e-6), 1), in place); returns the
    total norm before clipping as a float. Accepts named pairs too, like npformer's.

    The same refusals and messages as npformer's: `norm_type` must be >= 1 or inf (torch itself
    accepts any p > 0, and p < 1 shrinks gradients by orders of magnitude); `error_if_nonfinite=True`
    raises RuntimeError on a NaN/inf total norm without touching the gradients."""
    from npformer.optim.optimizers import nonfinite_norm_message
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


def portable_schedule_state(schedule: Any) -> dict[str, Any]:
    """npformer's WarmupSchedule.state_dict() format from this twin's schedule."""
    if not isinstance(schedule, WarmupSchedule):
        raise TypeError(f"expected a torchformer WarmupSchedule, got {type(schedule).__name__}")
    return {"type": "WarmupSchedule", "last_epoch": int(schedule.last_epoch),
            "d_model": schedule.d_model, "warmup_steps": schedule.warmup_steps,
            "factor": schedule.factor}


def load_portable_schedule_state(schedule: "WarmupSchedule", sd: dict[str, Any]) -> None:
    """Restore position and constants from npformer's format (optimizer lr left to the optimizer)."""
    lam = schedule.lr_lambdas[0]
    lam.d_model, lam.warmup_steps, lam.factor = int(sd["d_model"]), int(sd["warmup_steps"]), \
        float(sd["factor"])
    schedule.last_epoch = int(sd["last_epoch"])
    schedule._step_count = schedule.last_epoch + 1
    schedule._last_lr = [lam(schedule.last_epoch) for _ in schedule.optimizer.param_groups]
