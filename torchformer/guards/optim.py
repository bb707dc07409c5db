"""The optimizers' argument checks for torchformer: the parameters a user hands over (a model, its
parameters or named parameters, a list, parameter groups), and the hyper-parameters through
npformer's rules (npformer.guards.optim), so both twins refuse the same values with the same words.
torch.optim's own checks still run after these."""
from __future__ import annotations

from typing import Any

import torch

from npformer.guards.optim import check_adam_hyper, check_sgd_hyper, nonfinite_gradient_message, plain_hyper

__all__ = ["check_params", "check_hyper", "check_finite_gradients", "refuse_nonfinite_gradients",
           "refuse_changed_hyper"]

EXPECTED = "model.parameters(), model.named_parameters() or a list of Parameters"


def _tensors(who: str, items: list) -> list[torch.Tensor]:
    """Every tensor in `items`: bare tensors, (name, tensor) pairs, or parameter groups' "params"."""
    out: list[torch.Tensor] = []
    for i, item in enumerate(items):
        if isinstance(item, dict):
            group = item.get("params")
            group = [group] if isinstance(group, torch.Tensor) else list(group or ())
            out.extend(_tensors(who, group))
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            out.extend(_tensors(who, [item[1]]))
        elif isinstance(item, torch.Tensor):
            out.append(item)
        else:
            raise TypeError(f"{who}: params[{i}]: expected a Parameter, a (name, Parameter) pair or a "
                            f"parameter group (a dict), got {type(item).__name__}")
    return out


def check_params(who: str, params) -> list:
    """`params` as a list torch.optim takes; a model stands for its parameters. Empty, or holding
    one tensor twice (torch only warns there, and then steps that tensor twice), is an error."""
    if isinstance(params, torch.nn.Module):
        params = params.parameters()
    if isinstance(params, torch.Tensor):
        params = [params]
    try:
        items = list(params)
    except TypeError:
        raise TypeError(f"{who}: params: expected {EXPECTED}, got {type(params).__name__}") from None
    if not items:
        raise ValueError(f"{who}: params is empty; expected {EXPECTED}")
    tensors = _tensors(who, items)
    if len({id(t) for t in tensors}) != len(tensors):
        raise ValueError(f"{who}: the same Parameter appears twice in params (pass each tied "
                         f"parameter once, as model.named_parameters() does)")
    return items


def check_hyper(rule: str, who: str, hyper: dict[str, Any]) -> None:
    """Run npformer's rule ("sgd" or "adam") on the hyper-parameters: a tensor value (torch.optim
    takes a tensor lr) is refused as npformer refuses it, a TypeError naming the argument."""
    (check_sgd_hyper if rule == "sgd" else check_adam_hyper)(who, plain_hyper(hyper))


HYPER_KEYS = {"sgd": ("lr", "momentum", "dampening", "weight_decay", "nesterov"),
              "adam": ("lr", "betas", "eps", "weight_decay", "amsgrad")}


def refuse_changed_hyper(optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
    """The step pre-hook that runs npformer's rule again on every parameter group's
    hyper-parameters, as npformer's step does: a value set since construction
    (`group["lr"] = float("nan")` made every weight NaN) is refused before any parameter moves."""
    rule = "sgd" if isinstance(optimizer, torch.optim.SGD) else "adam"
    for group in optimizer.param_groups:
        check_hyper(rule, type(optimizer).__name__, {k: group[k] for k in HYPER_KEYS[rule]})


def check_finite_gradients(who: str, optimizer: torch.optim.Optimizer) -> None:
    """Every dense gradient the step would apply is finite, else the first bad one is named (by its
    parameter group's "param_names" when given, else its position, as npformer names bare
    Parameters), before any update; one device sync for all of them."""
    named: list[tuple[str, torch.Tensor]] = []
    position = 0
    for group in optimizer.param_groups:
        names = group.get("param_names")
        for j, p in enumerate(group["params"]):
            if p.grad is not None and not p.grad.is_sparse:
                named.append((names[j] if names else str(position), p.grad))
            position += 1
    if not named:
        return
    ok = torch.stack([torch.isfinite(g).all() for _, g in named])
    if bool(ok.all()):
        return
    name, g = named[int((~ok).nonzero()[0, 0])]
    bad = int(g.numel() - int(torch.isfinite(g).sum()))
    raise ValueError(nonfinite_gradient_message(who, name, bad, g.numel()))


def refuse_nonfinite_gradients(optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
    """The step pre-hook torchformer's optimizers register: check_finite_gradients, unless the step
    was given a closure (which computes the gradients itself). torch passes the step's own
    arguments, the optimizer first."""
    rest = args[1:] if args and args[0] is optimizer else args
    if kwargs.get("closure", rest[0] if rest else None) is None:
        check_finite_gradients(type(optimizer).__name__, optimizer)
