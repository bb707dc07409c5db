"""The paper's warm-up schedule for torch optimizers: a LambdaLR whose rate does not depend on the
optimizer's initial lr (LambdaLR with base lr 1.0), as in npformer.optim.schedule, whose warmup_lr
(the rate and its argument checks) it uses; and its state in npformer's portable format (what
checkpoints hold)."""
from __future__ import annotations

from typing import Any

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR

from npformer.optim.schedule import warmup_lr  # the same rate and the same refusals in both twins

__all__ = ["warmup_lr", "WarmupSchedule", "portable_schedule_state", "load_portable_schedule_state"]


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
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"WarmupSchedule: optimizer: expected a torch.optim optimizer, got "
                            f"{type(optimizer).__name__}")
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
