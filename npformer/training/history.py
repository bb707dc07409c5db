"""The per-step history of a whole training run, kept in its checkpoint so that a resumed run's plots
and summary cover every call of the run, not only the last.

    history = RunHistory()
    history.add(result, first_step)      a training call's curves (its TrainResult) and evaluations
    history.to_dict() / RunHistory.from_dict(d)          the checkpoint's metadata["history"]
    history.whole_result(result, tokens, seconds)        a TrainResult of the whole run

Bounded: the loss, learning rate and gradient norm of every step are kept while the run has at most
MAX_POINTS steps; past that the stride doubles (only steps s with (s - 1) % stride == 0 are kept,
step 1 always), so a run of any length keeps between MAX_POINTS / 2 and MAX_POINTS points per curve,
each with its step number. At most MAX_EVALS evaluations are kept (past that every second one is
dropped, the newest always kept).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RunHistory", "EvalPoint", "MAX_POINTS", "MAX_EVALS"]

MAX_POINTS = 10_000
MAX_EVALS = 1_000
_CURVES = ("losses", "lrs", "grad_norms")


@dataclass(frozen=True)
class EvalPoint:
    """A held-out evaluation of an earlier call, as the history keeps it."""
    loss: float
    token_accuracy: float
    sequence_accuracy: float


class RunHistory:
    """The run's kept steps (`steps`), their `losses`, `lrs` and `grad_norms`, the `stride` between
    kept steps, and `evals`: [step, loss, token accuracy, sequence accuracy] per evaluation."""

    def __init__(self):
        self.stride = 1
        self.steps: list[int] = []
        self.losses: list[float] = []
        self.lrs: list[float] = []
        self.grad_norms: list[float] = []
        self.evals: list[list] = []

    def add(self, result, first_step: int) -> None:
        """Append a training call whose step `first_step` is result.losses[0] (TrainState.record
        calls this), then thin to the bounds. A step without a learning rate or gradient norm (a
        hand-made result) keeps NaN there."""
        lrs, norms = list(result.lrs), list(result.grad_norms)
        for i, loss in enumerate(result.losses):
            step = first_step + i
            if (step - 1) % self.stride == 0:
                self.steps.append(step)
                self.losses.append(float(loss))
                self.lrs.append(float(lrs[i]) if i < len(lrs) else math.nan)
                self.grad_norms.append(float(norms[i]) if i < len(norms) else math.nan)
        while len(self.steps) > MAX_POINTS:
            self.stride *= 2
            keep = [i for i, s in enumerate(self.steps) if (s - 1) % self.stride == 0]
            for name in ("steps", *_CURVES):
                values = getattr(self, name)
                setattr(self, name, [values[i] for i in keep])
        for step, ev in result.eval_history:
            self.evals.append([int(step), float(ev.loss),
                               float(getattr(ev, "token_accuracy", math.nan)),
                               float(getattr(ev, "sequence_accuracy", math.nan))])
        while len(self.evals) > MAX_EVALS:
            self.evals = self.evals[::-2][::-1]          # every second one, the newest kept

    def whole_result(self, result, tokens: int | None, seconds: float):
        """A TrainResult of the whole run ending with `result` (already added): the kept curves with
        their step numbers (`loss_steps`), the earlier calls' evaluations as EvalPoints followed by
        `result`'s own evaluations, and the run's `tokens` and `seconds`."""
        from npformer.training.metrics import TrainResult
        start = result.steps - len(result.losses)
        earlier = [(s, EvalPoint(loss, tok, seq)) for s, loss, tok, seq in self.evals if s <= start]
        return TrainResult(steps=result.steps, losses=list(self.losses), lrs=list(self.lrs),
                           grad_norms=list(self.grad_norms),
                           eval_history=earlier + list(result.eval_history),
                           tokens=tokens if tokens is not None else result.tokens,
                           seconds=seconds, loss_steps=list(self.steps))

    def to_dict(self) -> dict:
        return {"stride": self.stride, "steps": list(self.steps),
                **{name: list(getattr(self, name)) for name in _CURVES},
                "evals": [list(e) for e in self.evals]}

    @classmethod
    def from_dict(cls, d) -> "RunHistory":
        """The history a checkpoint holds (None, from a file written before histories were kept,
        gives an empty one); a malformed one is a ValueError naming the field."""
        h = cls()
        if d is None:
            return h
        if not isinstance(d, dict):
            raise ValueError(f"history: expected a dict (RunHistory.to_dict), got {d!r:.80}")
        stride, steps = d.get("stride"), d.get("steps")
        if not (isinstance(stride, int) and not isinstance(stride, bool) and stride >= 1):
            raise ValueError(f"history: stride: expected an int >= 1, got {stride!r:.80}")
        if not (isinstance(steps, list) and all(isinstance(s, int) and not isinstance(s, bool)
                                                and s >= 1 for s in steps)
                and all(a < b for a, b in zip(steps, steps[1:]))):
            raise ValueError(f"history: steps: expected increasing ints >= 1, got {steps!r:.80}")
        for name in _CURVES:
            values = d.get(name)
            if not (isinstance(values, list) and len(values) == len(steps)
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)):
                raise ValueError(f"history: {name}: expected {len(steps)} numbers (one per kept "
                                 f"step), got {values!r:.80}")
            setattr(h, name, [float(v) for v in values])
        evals = d.get("evals")
        if not (isinstance(evals, list) and all(
                isinstance(e, list) and len(e) == 4 and isinstance(e[0], int)
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in e[1:])
                for e in evals)):
            raise ValueError(f"history: evals: expected [step, loss, token accuracy, sequence "
                             f"accuracy] lists, got {evals!r:.80}")
        h.stride, h.steps, h.evals = stride, list(steps), [list(e) for e in evals]
        return h
