"""The paper's learning rate: linear warm-up, then inverse square-root decay (section 5.3)."""
from __future__ import annotations

from typing import Any

import numpy as np

from npformer.guards.optim import is_real
from npformer.optim.base import Optimizer

__all__ = ["warmup_lr", "WarmupSchedule"]


def warmup_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    r"""The paper's learning rate (section 5.3): linear warm-up, then inverse square-root decay.

        lr(s) = factor * d_model^{-1/2} * min(s^{-1/2}, s * warmup_steps^{-3/2}),   s = max(step, 1)

    The two branches meet at s = warmup_steps, the peak, factor * (d_model * warmup_steps)^{-1/2}.
    Step 0 is treated as step 1 (the formula is undefined at 0).
    """
    for name, v in (("step", step), ("d_model", d_model), ("warmup_steps", warmup_steps)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"warmup_lr: {name}: expected an int, got {type(v).__name__}")
    if step < 0:
        raise ValueError(f"warmup_lr: step: expected an int >= 0, got {step}")
    if d_model < 1:
        raise ValueError(f"warmup_lr: d_model: expected a positive int, got {d_model}")
    if warmup_steps < 1:
        raise ValueError(f"warmup_lr: warmup_steps: expected a positive int, got {warmup_steps}")
    if not is_real(factor) or factor < 0:
        raise ValueError(f"warmup_lr: factor: expected a float >= 0, got {factor!r}")
    s = max(int(step), 1)
    return float(factor) * d_model ** -0.5 * min(s ** -0.5, s * warmup_steps ** -1.5)


class WarmupSchedule:
    """Sets `optimizer.lr = warmup_lr(last_epoch + 1, d_model, warmup_steps, factor)`.

    Behaves exactly like `torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_lr(s + 1, ...))` on an
    optimizer whose base learning rate is 1.0: construction sets last_epoch = 0 and the first rate,
    each `step()` (call it after `optimizer.step()`) increments last_epoch and sets the next rate.
    The optimizer's own lr at construction is overwritten, not multiplied; scale with `factor`.
    """

    def __init__(self, optimizer: Optimizer, d_model: int, warmup_steps: int,
                 factor: float = 1.0) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"WarmupSchedule: optimizer: expected an npformer Optimizer, got "
                            f"{type(optimizer).__name__}")
        warmup_lr(1, d_model, warmup_steps, factor)             # validates the three arguments
        self.optimizer = optimizer
        self.d_model = int(d_model)
        self.warmup_steps = int(warmup_steps)
        self.factor = float(factor)
        self.last_epoch = -1
        self.step()

    def get_lr(self) -> float:
        """The rate for the current `last_epoch`."""
        return warmup_lr(self.last_epoch + 1, self.d_model, self.warmup_steps, self.factor)

    def get_last_lr(self) -> list[float]:
        """The rate last set, as a one-element list (torch's LRScheduler API)."""
        return [self._last_lr]

    def step(self) -> None:
        self.last_epoch += 1
        self.optimizer.lr = self.get_lr()
        self._last_lr = self.optimizer.lr

    def state_dict(self) -> dict[str, Any]:
        """`{"type": "WarmupSchedule", "last_epoch", "d_model", "warmup_steps", "factor"}`."""
        return {"type": "WarmupSchedule", "last_epoch": self.last_epoch, "d_model": self.d_model,
                "warmup_steps": self.warmup_steps, "factor": self.factor}

    @staticmethod
    def check_state_dict(sd: dict[str, Any]) -> dict[str, Any]:
        """Validate a schedule state dict; return a normalised copy. Changes nothing."""
        who = "WarmupSchedule.load_state_dict"
        if not isinstance(sd, dict):
            raise TypeError(f"{who}: expected a dict, got {type(sd).__name__}")
        want = {"type", "last_epoch", "d_model", "warmup_steps", "factor"}
        if set(sd) != want:
            raise ValueError(f"{who}: expected keys {sorted(want)}, got {sorted(sd)}")
        if sd["type"] != "WarmupSchedule":
            raise ValueError(f"{who}: type: expected 'WarmupSchedule', got {sd['type']!r}")
        le = sd["last_epoch"]
        if not isinstance(le, (int, np.integer)) or isinstance(le, bool) or le < 0:
            raise ValueError(f"{who}: last_epoch: expected an int >= 0, got {le!r}")
        try:
            warmup_lr(1, sd["d_model"], sd["warmup_steps"], sd["factor"])
        except (TypeError, ValueError) as e:
            raise ValueError(f"{who}: {e}") from None
        return {"type": "WarmupSchedule", "last_epoch": int(le), "d_model": int(sd["d_model"]),
                "warmup_steps": int(sd["warmup_steps"]), "factor": float(sd["factor"])}

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        """Restore the position and constants (like LambdaLR, the optimizer's lr is left alone: it is
        restored with the optimizer's own state)."""
        sd = self.check_state_dict(sd)
        self.last_epoch = sd["last_epoch"]
        self.d_model, self.warmup_steps, self.factor = sd["d_model"], sd["warmup_steps"], sd["factor"]
        self._last_lr = self.get_lr()

    def __repr__(self) -> str:
        return (f"WarmupSchedule(d_model={self.d_model}, warmup_steps={self.warmup_steps}, "
                f"factor={self.factor}, last_epoch={self.last_epoch})")
