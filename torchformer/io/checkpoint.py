"""Checkpoints for torchformer models: the same .npz format as npformer.io.checkpoint, read and written here.

The file format, its reader and CheckpointError live in npformer.io.checkpoint (the format is NumPy); this
module converts between torch objects and that format:

- weights: every name of `model.named_parameters(remove_duplicate=False)` (a tied weight under each
  name, as npformer's state_dict), converted to tensors on the model's device and dtype on load;
- optimizer: torch.optim.SGD / Adam / AdamW (one parameter group) <-> npformer's optimizer state dict
  keyed by model parameter names; loading builds a torch `state_dict()` in the optimizer's parameter
  order, so `optimizer.step()` continues exactly where the saved run stopped, whichever twin saved it;
- schedule: torchformer.optim.WarmupSchedule <-> npformer's WarmupSchedule.state_dict() format.

A model wrapped by `torch.compile` or DistributedDataParallel is saved and restored as the model inside
(`torchformer.models.bridge.unwrap`): the file names the model's class and its plain parameter names,
so it loads in either twin whether or not the reader compiles.

Same functions as npformer.io.checkpoint: save_checkpoint, load_checkpoint, load_model, restore.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from npformer.io.checkpoint import (
    FORMAT_VERSION,
    Checkpoint,
    CheckpointError,
    CheckpointNotFoundError,
    check_training_objects,
    check_weights,
    load_checkpoint,
    model_class_for,
    write_checkpoint,
)
from npformer.io.optimizer_values import check_optimizer_values
from npformer.models.config import TransformerConfig
from npformer.optim import WarmupSchedule as _NpWarmupSchedule
from torchformer.guards.validation import check_device_arg
from torchformer.models.bridge import unwrap
from torchformer.optim import WarmupSchedule, load_portable_schedule_state, portable_schedule_state

__all__ = ["Checkpoint", "CheckpointError", "CheckpointNotFoundError", "FORMAT_VERSION",
           "save_checkpoint", "load_checkpoint", "load_model", "restore",
           "optimizer_to_portable", "portable_to_optimizer_state"]

HYPER = {"SGD": ("lr", "momentum", "dampening", "weight_decay", "nesterov"),
         "Adam": ("lr", "betas", "eps", "weight_decay", "amsgrad"),
         "AdamW": ("lr", "betas", "eps", "weight_decay", "amsgrad")}


def _state_keys(kind: str, hyper: dict[str, Any]) -> tuple[str, ...]:
    if kind == "SGD":
        return ("momentum_buffer",) if hyper["momentum"] != 0 else ()
    keys = ("step", "exp_avg", "exp_avg_sq")
    return keys + ("max_exp_avg_sq",) if hyper["amsgrad"] else keys


def _optimizer_kind(path, opt: torch.optim.Optimizer) -> str:
    """"SGD", "Adam" or "AdamW" for torch.optim's classes (Adam with decoupled decay is AdamW)."""
    if len(opt.param_groups) != 1:
        raise CheckpointError(path, f"optimizer has {len(opt.param_groups)} parameter groups; the "
                                    f"checkpoint format holds one")
    group = opt.param_groups[0]
    if group.get("maximize", False):
        raise CheckpointError(path, "optimizer with maximize=True is not supported by the format")
    if isinstance(opt, torch.optim.AdamW):
        return "AdamW"
    if isinstance(opt, torch.optim.Adam):
        return "AdamW" if group.get("decoupled_weight_decay", False) else "Adam"
    if isinstance(opt, torch.optim.SGD):
        return "SGD"
    raise CheckpointError(path, f"optimizer {type(opt).__name__} is not supported (SGD, Adam, AdamW)")


def _plain(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v.item()
    if isinstance(v, (tuple, list)):
        return tuple(_plain(x) for x in v)
    return v


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().to("cpu")
    if t.dtype not in (torch.float32, torch.float64):
        t = t.to(torch.float32)                                   # bf16/fp16 -> float32 on disk
    return t.numpy().copy()


def optimizer_to_portable(path, model: torch.nn.Module, opt: torch.optim.Optimizer) -> dict[str, Any]:
    """npformer's optimizer state dict (names = the model's parameter names) from a torch optimizer."""
    kind = _optimizer_kind(path, opt)
    group = opt.param_groups[0]
    first = {id(p): n for n, p in model.named_parameters()}
    names = []
    for i, p in enumerate(group["params"]):
        if id(p) not in first:
            raise CheckpointError(path, f"optimizer parameter {i} is not a parameter of the model")
        names.append(first[id(p)])
    hyper = {k: _plain(group[k]) for k in HYPER[kind]}
    want = _state_keys(kind, hyper)
    state: dict[str, dict[str, Any]] = {}
    for p, name in zip(group["params"], names):
        st = opt.state.get(p)
        if not st or any(st.get(k) is None for k in want):
            continue
        extra = sorted(set(st) - set(want))
        if extra:
            raise CheckpointError(path, f"optimizer state of {name!r} has keys {extra} the format "
                                        f"does not hold")
        state[name] = {k: (int(round(float(st[k]))) if k == "step" else _to_numpy(st[k]))
                       for k in want}
    return {"type": kind, "hyperparams": hyper, "param_names": names, "state": state}


def _check_hyper(path, kind: str, hyper: Any) -> dict[str, Any]:
    if not isinstance(hyper, dict) or set(hyper) != set(HYPER[kind]):
        got = sorted(hyper) if isinstance(hyper, dict) else type(hyper).__name__
        raise CheckpointError(path, f"optimizer hyperparams: expected keys {sorted(HYPER[kind])}, "
                                    f"got {got}")
    out = dict(hyper)
    for k, v in hyper.items():
        if k in ("nesterov", "amsgrad"):
            ok = isinstance(v, bool)
        elif k == "betas":
            ok = isinstance(v, (list, tuple)) and len(v) == 2 and all(
                isinstance(b, (int, float)) and not isinstance(b, bool) and 0 <= b < 1 for b in v)
            if ok:
                out[k] = tuple(float(b) for b in v)
        else:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if not ok:
            raise CheckpointError(path, f"optimizer hyperparameter {k}: unexpected value {v!r}")
    return out


def portable_to_optimizer_state(path, model: torch.nn.Module, opt: torch.optim.Optimizer,
                                sd: dict[str, Any]) -> dict[str, Any]:
    """A torch `optimizer.state_dict()` for `opt` built from npformer's format; validates everything
    (type, parameters, state keys, shapes) and changes nothing."""
    kind = _optimizer_kind(path, opt)
    if sd["type"] != kind:
        raise CheckpointError(path, f"optimizer state is for {sd['type']!r}, the optimizer is {kind!r}")
    hyper = _check_hyper(path, kind, sd["hyperparams"])
    group = opt.param_groups[0]
    params = group["params"]
    index = {id(p): i for i, p in enumerate(params)}
    alias = dict(model.named_parameters(remove_duplicate=False))
    resolved: dict[str, int] = {}
    for n in sd["param_names"]:
        if n not in alias or id(alias[n]) not in index:
            raise CheckpointError(path, f"optimizer state names {n!r}, which is not a parameter of "
                                        f"both the model and the optimizer")
        resolved[n] = index[id(alias[n])]
    if sorted(resolved.values()) != list(range(len(params))):
        raise CheckpointError(path, f"optimizer state covers {len(set(resolved.values()))} of the "
                                    f"optimizer's {len(params)} parameters")
    want = set(_state_keys(kind, hyper))
    scalar = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
    state: dict[int, dict[str, Any]] = {}
    for n, st in sd["state"].items():
        if n not in resolved:
            raise CheckpointError(path, f"optimizer state for unknown parameter {n!r}")
        i = resolved[n]
        p = params[i]
        if set(st) != want:
            raise CheckpointError(path, f"optimizer state of {n!r}: expected keys {sorted(want)}, "
                                        f"got {sorted(st)}")
        entry = {}
        for k, v in st.items():
            if k == "step":
                entry[k] = torch.tensor(float(v), dtype=scalar)
                continue
            a = np.asarray(v)
            if tuple(a.shape) != tuple(p.shape):
                raise CheckpointError(path, f"optimizer state {n}/{k}: expected shape "
                                            f"{tuple(p.shape)}, got {a.shape}")
            entry[k] = torch.from_numpy(np.array(a)).to(device=p.device, dtype=p.dtype)
        state[i] = entry
    new_group = {k: v for k, v in group.items() if k != "params"}
    new_group.update(hyper)
    new_group["params"] = list(range(len(params)))
    return {"state": state, "param_groups": [new_group]}


def save_checkpoint(path, model: torch.nn.Module, optimizer=None, schedule=None, step: int = 0,
                    metadata: dict[str, Any] | None = None, overwrite: bool = True) -> Path:
    """Save a torchformer model (and optionally its torch.optim optimizer, WarmupSchedule, training
    step and JSON metadata) in the format npformer reads. `overwrite=False` keeps an existing file
    at `path` and raises FileExistsError, as npformer's does."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"save_checkpoint: model: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    check_training_objects("save_checkpoint", optimizer, schedule, optimizer_type=torch.optim.Optimizer,
                           schedule_type=WarmupSchedule, twin="torchformer")
    model = unwrap(model)
    config = getattr(model, "config", None)
    config = config if isinstance(config, TransformerConfig) else None
    state = {n: _to_numpy(p) for n, p in model.named_parameters(remove_duplicate=False)}
    opt_state = None if optimizer is None else optimizer_to_portable(path, model, optimizer)
    sched_state = None if schedule is None else portable_schedule_state(schedule)
    return write_checkpoint(path, writer="torchformer", model_class=type(model).__name__,
                            config=config, state=state, optimizer_state=opt_state,
                            schedule_state=sched_state, step=step, metadata=metadata,
                            versions={"numpy": np.__version__, "torch": torch.__version__},
                            overwrite=overwrite)


def _as_checkpoint(path_or_ckpt) -> Checkpoint:
    return path_or_ckpt if isinstance(path_or_ckpt, Checkpoint) else load_checkpoint(path_or_ckpt)


def restore(path_or_ckpt, model: torch.nn.Module, optimizer=None, schedule=None) -> Checkpoint:
    """Load weights (and optimizer / schedule state) into existing torch objects: all or nothing.

    Weights are converted to each parameter's device and dtype. Everything is validated before the
    first write (torch's own load_state_dict can leave a model half-loaded; this never does).
    """
    ckpt = _as_checkpoint(path_or_ckpt)
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"restore: model: expected a torch.nn.Module, got {type(model).__name__}")
    check_training_objects("restore", optimizer, schedule, optimizer_type=torch.optim.Optimizer,
                           schedule_type=WarmupSchedule, twin="torchformer")
    model = unwrap(model)
    named = list(model.named_parameters(remove_duplicate=False))
    check_weights(ckpt, {n: tuple(p.shape) for n, p in named}, type(model).__name__)
    opt_sd = None
    if optimizer is not None:
        if ckpt.optimizer_state is None:
            raise CheckpointError(ckpt.path, "holds no optimizer state")
        check_optimizer_values(ckpt)                        # NaN / negative moments: never resumed
        opt_sd = portable_to_optimizer_state(ckpt.path, model, optimizer, ckpt.optimizer_state)
    sched_sd = None
    if schedule is not None:
        if ckpt.schedule_state is None:
            raise CheckpointError(ckpt.path, "holds no schedule state")
        if not isinstance(schedule, WarmupSchedule):
            raise CheckpointError(ckpt.path, f"cannot restore into a {type(schedule).__name__} "
                                             f"(only torchformer.optim.WarmupSchedule)")
        try:
            sched_sd = _NpWarmupSchedule.check_state_dict(ckpt.schedule_state)
        except (TypeError, ValueError) as e:
            raise CheckpointError(ckpt.path, f"schedule state does not fit: {e}") from None
    # -- all validated: apply --
    with torch.no_grad():
        for n, p in named:
            p.copy_(torch.from_numpy(np.array(ckpt.state[n])).to(device=p.device, dtype=p.dtype))
    if opt_sd is not None:
        optimizer.load_state_dict(opt_sd)
    if sched_sd is not None:
        load_portable_schedule_state(schedule, sched_sd)
    return ckpt


def load_model(path_or_ckpt, model_class: Callable | None = None, device=None,
               dtype=None) -> torch.nn.Module:
    """A fresh torchformer model built from the saved config, holding the saved weights.

    device: where to put it (default CPU). dtype: "float32" / "float64" (or the torch dtypes) to
    override the saved config's dtype. model_class: a class to build instead of the one named in the
    file (called with the config, or with no argument when the file has no config).
    """
    check_device_arg("device", device)                  # before the file is read
    ckpt = _as_checkpoint(path_or_ckpt)
    config = ckpt.config
    tdtype = None
    if dtype is not None:
        names = {torch.float32: "float32", torch.float64: "float64", "float32": "float32",
                 "float64": "float64"}
        if dtype not in names:
            raise ValueError(f"load_model: dtype: expected float32 or float64, got {dtype!r}")
        tdtype = getattr(torch, names[dtype])
        if config is not None:
            config = config.replace(dtype=names[dtype])
    if config is None and model_class is None:
        raise CheckpointError(ckpt.path, "has no config; pass model_class= to build the model")
    cls = model_class if model_class is not None else model_class_for(ckpt, "torchformer")
    try:
        model = cls(config) if config is not None else cls()
    except (TypeError, ValueError) as e:
        raise CheckpointError(ckpt.path, f"cannot build {getattr(cls, '__name__', cls)}: {e}") from None
    if tdtype is not None and config is None:
        model = model.to(dtype=tdtype)
    if device is not None:
        model = model.to(device)
    restore(ckpt, model)
    return model
