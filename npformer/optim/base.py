"""The optimizer base class: named parameters, hyper-parameters, per-parameter state, state_dict.

The update rules are those of `torch.optim` (torch 2.13, single-tensor path), operation for operation,
so a model trained here and the same model trained by torchformer with `torch.optim` stay equal to
rounding. Notation for one parameter at step t (counted per parameter, from 1):

    theta   the parameter          g_t  its gradient          gamma  the learning rate (`lr`)
    lambda  `weight_decay`         mu   `momentum`            tau    `dampening`
    beta1, beta2   `betas`         eps  `eps`

Every optimizer takes `params` as `model.named_parameters()`, a list of `(name, Parameter)` pairs, or a
list of Parameters (named "0", "1", ...). Its state is keyed by those names, so `state_dict()` can be
checked against a model and moved to the torch twin by name (npformer.io.checkpoint does that).
A parameter whose `.grad` is None is skipped by `step()` (as torch skips a parameter without grad);
a gradient holding NaN or inf is refused, naming the parameter, before any parameter is updated.

Hyper-parameters are plain attributes (`opt.lr = 0.1` changes the learning rate, which is what
`WarmupSchedule` does every step); `step()` checks them again first, so a value set since (a NaN,
a negative rate, a string) is refused with the constructor's message before any parameter moves.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from npformer.guards.optim import check_finite_gradient, plain_hyper
from npformer.layers.module import Module, Parameter

__all__ = ["Optimizer", "named_params"]


def named_params(params, who: str) -> tuple[list[str], list[Parameter]]:
    """Normalise `params` to (names, Parameters): pairs keep their names, bare Parameters get "0", "1", ...

    A Module is accepted too (its `named_parameters()`). Duplicates and an empty list are errors.
    """
    if isinstance(params, Module):
        params = params.named_parameters()
    if isinstance(params, Parameter):
        params = [params]
    items = list(params)
    if not items:
        raise ValueError(f"{who}: params is empty; expected model.named_parameters(), a list of "
                         f"(name, Parameter) pairs or a list of Parameters")
    names: list[str] = []
    plist: list[Parameter] = []
    for i, item in enumerate(items):
        if isinstance(item, Parameter):
            name, p = str(i), item
        elif (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
              and isinstance(item[1], Parameter)):
            name, p = item
        else:
            raise TypeError(f"{who}: params[{i}]: expected a Parameter or a (name, Parameter) pair, "
                            f"got {type(item).__name__}")
        if not np.issubdtype(p.data.dtype, np.floating):
            raise TypeError(f"{who}: parameter {name!r}: expected a floating dtype, got "
                            f"{p.data.dtype}")
        names.append(name)
        plist.append(p)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{who}: parameter names must be unique, got duplicates {dup} (mixing bare "
                         f"Parameters and named pairs can cause this)")
    if len({id(p) for p in plist}) != len(plist):
        raise ValueError(f"{who}: the same Parameter appears twice in params (pass each tied "
                         f"parameter once, as model.named_parameters() does)")
    return names, plist


class Optimizer:
    """Named parameters, hyper-parameters (attributes) and per-parameter state `state[name]`.

    Subclasses define `HYPER` (hyper-parameter names), `_check_hyper(h)` and `_update(p, g, state)`,
    plus `_state_keys(hyper)`: the keys a non-empty per-parameter state holds.
    """

    HYPER: tuple[str, ...] = ()
    # the update rule's name, as state_dict() writes it; a speed variant of a rule (npformer.fast) sets
    # the plain class's name, so its state loads into either
    RULE: str | None = None
    # refuse a NaN/inf gradient before any update (the speed variants the training loop uses leave
    # it to the loop, which stops on a non-finite gradient norm before it updates)
    CHECK_FINITE = True

    @property
    def rule(self) -> str:
        return type(self).RULE or type(self).__name__

    def __init__(self, params, **hyper: Any) -> None:
        who = type(self).__name__
        self.param_names, self.params = named_params(params, who)
        hyper = self._normalise_hyper(hyper)
        self._check_hyper(hyper)
        for k, v in hyper.items():
            setattr(self, k, v)
        # per-parameter state, filled lazily by the first step that sees a gradient
        self.state: dict[str, dict[str, Any]] = {n: {} for n in self.param_names}

    # -- hyper-parameters -----------------------------------------------------------------------------
    @property
    def hyperparams(self) -> dict[str, Any]:
        """The current hyper-parameters as a dict (betas as a tuple)."""
        return {k: getattr(self, k) for k in self.HYPER}

    @staticmethod
    def _normalise_hyper(h: dict[str, Any]) -> dict[str, Any]:
        return plain_hyper(h)

    def _check_hyper(self, h: dict[str, Any]) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _state_keys(self, h: dict[str, Any]) -> tuple[str, ...]:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- the step -------------------------------------------------------------------------------------
    def zero_grad(self) -> None:
        """Set every parameter's gradient to zero, in place (npformer backward accumulates)."""
        for p in self.params:
            p.zero_grad()

    def step(self) -> None:
        """Update every parameter that has a gradient, in place (`.data` keeps its dtype)."""
        who = type(self).__name__
        self._check_hyper(self._normalise_hyper(self.hyperparams))   # as set since construction
        for name, p in zip(self.param_names, self.params):   # loop over parameters, not data
            g = p.grad
            if g is None:
                continue
            if not isinstance(g, np.ndarray) or g.shape != p.data.shape or g.dtype != p.data.dtype:
                got = f"shape {g.shape} and dtype {g.dtype}" if isinstance(g, np.ndarray) \
                    else type(g).__name__
                raise ValueError(f"{who}.step: parameter {name!r}: expected a gradient of shape "
                                 f"{p.data.shape} and dtype {p.data.dtype}, got {got}")
            if self.CHECK_FINITE:
                check_finite_gradient(who, name, g)
        for name, p in zip(self.param_names, self.params):
            if p.grad is not None:
                self._update(p.data, p.grad, self.state[name])

    def _update(self, theta: np.ndarray, g: np.ndarray, state: dict) -> None:  # pragma: no cover
        raise NotImplementedError

    # -- state ----------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """A copy of everything needed to continue training.

        `{"type": class name, "hyperparams": {...}, "param_names": [...],
          "state": {param_name: {"step": int, "exp_avg": array, ...}}}`; parameters not stepped yet
        have no entry in "state". Arrays are copies.
        """
        state = {}
        for name in self.param_names:
            s = self.state[name]
            if s:
                state[name] = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
        hyper = self.hyperparams
        return {"type": self.rule, "hyperparams": hyper,
                "param_names": list(self.param_names), "state": state}

    def check_state_dict(self, sd: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict]]:
        """Validate `sd` against this optimizer's parameters; return (hyperparams, new state).

        Raises ValueError naming every problem; changes nothing. `load_state_dict` applies the result.
        """
        who = f"{type(self).__name__}.load_state_dict"
        if not isinstance(sd, dict):
            raise TypeError(f"{who}: expected a dict from state_dict(), got {type(sd).__name__}")
        missing = [k for k in ("type", "hyperparams", "param_names", "state") if k not in sd]
        if missing:
            raise ValueError(f"{who}: state dict lacks keys {missing}")
        if sd["type"] != self.rule:
            raise ValueError(f"{who}: expected the state of a {self.rule} optimizer, got "
                             f"that of {sd['type']!r}")
        hyper = sd["hyperparams"]
        if not isinstance(hyper, dict) or set(hyper) != set(self.HYPER):
            got = sorted(hyper) if isinstance(hyper, dict) else type(hyper).__name__
            raise ValueError(f"{who}: hyperparams: expected keys {sorted(self.HYPER)}, got {got}")
        hyper = self._normalise_hyper(hyper)
        self._check_hyper(hyper)
        names = list(sd["param_names"])
        problems = []
        if sorted(names) != sorted(self.param_names):
            miss = sorted(set(self.param_names) - set(names))
            extra = sorted(set(names) - set(self.param_names))
            problems.append(f"parameter names differ: missing {miss}, unexpected {extra}")
        state_in = sd["state"]
        if not isinstance(state_in, dict):
            raise TypeError(f"{who}: state: expected a dict, got {type(state_in).__name__}")
        unknown = sorted(set(state_in) - set(self.param_names))
        if unknown:
            problems.append(f"state for unknown parameters {unknown}")
        want_keys = set(self._state_keys(hyper))
        new_state: dict[str, dict] = {n: {} for n in self.param_names}
        for name, p in zip(self.param_names, self.params):
            s = state_in.get(name)
            if not s:
                continue
            if not isinstance(s, dict) or set(s) != want_keys:
                got = sorted(s) if isinstance(s, dict) else type(s).__name__
                problems.append(f"{name}: expected state keys {sorted(want_keys)}, got {got}")
                continue
            staged = {}
            for k, v in s.items():
                if k == "step":
                    v = np.asarray(v)
                    ok = v.ndim == 0 and (np.issubdtype(v.dtype, np.integer) or
                                          (np.issubdtype(v.dtype, np.floating) and
                                           float(v) == round(float(v))))
                    if not ok or int(v) < 0:
                        problems.append(f"{name}/step: expected a non-negative integer, got {v!r}")
                        continue
                    staged[k] = int(v)
                    continue
                v = np.asarray(v)
                if not (np.issubdtype(v.dtype, np.floating) or np.issubdtype(v.dtype, np.integer)):
                    problems.append(f"{name}/{k}: expected a float array, got dtype {v.dtype}")
                elif v.shape != p.data.shape:
                    problems.append(f"{name}/{k}: expected shape {p.data.shape}, got {v.shape}")
                else:
                    staged[k] = v.astype(p.data.dtype, copy=True)   # a fresh copy in the param dtype
            new_state[name] = staged
        if problems:
            raise ValueError(f"{who}: " + "; ".join(problems) + " (nothing was loaded)")
        return hyper, new_state

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        """Restore hyper-parameters and state from `state_dict()` output; all or nothing."""
        hyper, new_state = self.check_state_dict(sd)
        for k, v in hyper.items():
            setattr(self, k, v)
        self.state = new_state

    def __repr__(self) -> str:
        hp = ", ".join(f"{k}={v!r}" for k, v in self.hyperparams.items())
        return f"{type(self).__name__}({len(self.params)} parameters, {hp})"
