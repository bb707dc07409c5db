"""The optimizers' hyper-parameter rules, written once for both twins (framework-free).

npformer's SGD / Adam / AdamW run them on their arguments, and torchformer's (torch.optim's classes
with these checks in front) run the same functions, so `Adam(params, lr=float("nan"))` raises the
same error, with the same message, from either twin. `who` is the optimizer's class name.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["need", "is_real", "refuse_arrays", "plain_hyper", "check_sgd_hyper", "check_adam_hyper",
           "nonfinite_gradient_message", "check_finite_gradient"]


def need(cond: bool, who: str, field: str, expected: str, got: Any) -> None:
    if not cond:
        raise ValueError(f"{who}: {field}: expected {expected}, got {got!r}")


def is_real(v: Any) -> bool:
    """A finite Python or NumPy number, not a bool."""
    return isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool) \
        and math.isfinite(float(v))


def refuse_arrays(who: str, h: dict[str, Any]) -> None:
    """A hyper-parameter given as an array or tensor (a 0-d one included; betas' members alike) is a
    TypeError in both twins: npformer's update reads plain numbers, and torch's tensor learning rate
    (for compiled or captured steps) is not one the twins share."""
    for field, v in h.items():
        parts = [(f"{field}[{i}]", x) for i, x in enumerate(v)] if field == "betas" and \
            isinstance(v, (list, tuple)) else [(field, v)]
        for name, x in parts:
            if hasattr(x, "shape") and not isinstance(x, np.generic):
                raise TypeError(f"{who}: {name}: expected a Python or NumPy number, got a "
                                f"{type(x).__name__} of shape {tuple(x.shape)} (pass a number: "
                                f"float({name}) or {name}.item())")


def plain_hyper(h: dict[str, Any]) -> dict[str, Any]:
    """NumPy scalars as Python numbers and bools, and betas as a tuple of them."""
    out = dict(h)
    for k, v in out.items():
        if isinstance(v, np.bool_):
            out[k] = bool(v)
        elif isinstance(v, (np.floating, np.integer)):
            out[k] = v.item()
    if "betas" in out and isinstance(out["betas"], (list, tuple)):
        out["betas"] = tuple(b.item() if isinstance(b, (np.floating, np.integer)) else b
                             for b in out["betas"])
    return out


def check_sgd_hyper(who: str, h: dict[str, Any]) -> None:
    """lr, momentum, weight_decay >= 0 and finite; dampening finite; nesterov a bool that needs
    momentum > 0 and dampening == 0 (torch.optim.SGD's conditions); an array or tensor value is a
    TypeError (refuse_arrays)."""
    refuse_arrays(who, h)
    need(is_real(h["lr"]) and h["lr"] >= 0, who, "lr", "a float >= 0", h["lr"])
    need(is_real(h["momentum"]) and h["momentum"] >= 0, who, "momentum", "a float >= 0",
         h["momentum"])
    need(is_real(h["dampening"]), who, "dampening", "a finite float", h["dampening"])
    need(is_real(h["weight_decay"]) and h["weight_decay"] >= 0, who, "weight_decay",
         "a float >= 0", h["weight_decay"])
    need(isinstance(h["nesterov"], bool), who, "nesterov", "a bool", h["nesterov"])
    need(not h["nesterov"] or (h["momentum"] > 0 and h["dampening"] == 0), who, "nesterov",
         f"False unless momentum > 0 and dampening == 0 (momentum={h['momentum']!r}, "
         f"dampening={h['dampening']!r})", h["nesterov"])


def check_adam_hyper(who: str, h: dict[str, Any]) -> None:
    """lr, eps, weight_decay >= 0 and finite; betas a pair in [0, 1); amsgrad a bool; an array or
    tensor value is a TypeError (refuse_arrays)."""
    refuse_arrays(who, h)
    need(is_real(h["lr"]) and h["lr"] >= 0, who, "lr", "a float >= 0", h["lr"])
    b = h["betas"]
    need(isinstance(b, tuple) and len(b) == 2 and all(is_real(x) and 0 <= x < 1 for x in b),
         who, "betas", "a pair of floats in [0, 1)", b)
    need(is_real(h["eps"]) and h["eps"] >= 0, who, "eps", "a float >= 0", h["eps"])
    need(is_real(h["weight_decay"]) and h["weight_decay"] >= 0, who, "weight_decay",
         "a float >= 0", h["weight_decay"])
    need(isinstance(h["amsgrad"], bool), who, "amsgrad", "a bool", h["amsgrad"])


def nonfinite_gradient_message(who: str, name: str, bad: int, size: int) -> str:
    return (f"{who}.step: parameter {name!r}: expected a finite gradient, got {bad} NaN/inf entries "
            f"of {size}; nothing was updated (one such step would make the weights NaN for good)")


def check_finite_gradient(who: str, name: str, g: np.ndarray) -> None:
    """A NaN or inf in a gradient, refused before any parameter is updated (torch.optim would
    apply it; the training loop stops on a non-finite gradient norm before its update)."""
    finite = np.isfinite(g)
    if not finite.all():
        raise ValueError(nonfinite_gradient_message(who, name, int(g.size - np.count_nonzero(finite)),
                                                    g.size))
