"""Checkpoints of npformer models: save, load, restore (the file format: npformer.io.checkpoint_file).

API (torchformer.io.checkpoint has the same functions for torch models):
    save_checkpoint(path, model, optimizer=None, schedule=None, step=0, metadata=None) -> Path
    load_checkpoint(path) -> Checkpoint                    read and validate the file, build nothing
    load_model(path_or_checkpoint, model_class=None)       a fresh model with the saved weights
    restore(path_or_checkpoint, model, optimizer=None, schedule=None)
                                                           into existing objects: all or nothing
Every problem with a file raises CheckpointError (a ValueError) naming the file and the problem.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Callable

import numpy as np

from npformer.io.checkpoint_file import (  # noqa: F401
    FORMAT_NAME,
    FORMAT_VERSION,
    MODEL_CLASSES,
    Checkpoint,
    CheckpointError,
    CheckpointNotFoundError,
    write_checkpoint,
)
from npformer.io.checkpoint_read import (  # noqa: F401
    MAX_ENTRIES,
    MAX_HEADER_BYTES,
    as_checkpoint,
    check_weights,
    load_checkpoint,
    rename_optimizer_state,
)
from npformer.io.optimizer_values import check_optimizer_values
from npformer.layers.module import Module, Parameter
from npformer.models.config import TransformerConfig
from npformer.optim import Optimizer, WarmupSchedule

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "CheckpointError", "CheckpointNotFoundError", "Checkpoint",
           "save_checkpoint", "load_checkpoint", "load_model", "restore", "write_checkpoint",
           "check_weights", "check_training_objects", "MODEL_CLASSES"]


def check_training_objects(who: str, optimizer, schedule, *, optimizer_type: type,
                           schedule_type: type, twin: str) -> None:
    """`optimizer` and `schedule` (each may be None) are the twin's own kinds, refused in one line
    naming the argument otherwise (a string, the other twin's optimizer, the two swapped), before a
    file is touched."""
    for name, obj, kind, what in (("optimizer", optimizer, optimizer_type, "optimizer (SGD, Adam, AdamW)"),
                                  ("schedule", schedule, schedule_type, "WarmupSchedule")):
        if obj is not None and not isinstance(obj, kind):
            package = type(obj).__module__.split(".")[0]
            got = type(obj).__name__ if package == "builtins" else f"{package} {type(obj).__name__}"
            raise TypeError(f"{who}: {name}: expected None or {'an' if twin == 'npformer' else 'a'} "
                            f"{twin} {what}, got {got}")


# -- npformer models ----------------------------------------------------------------------------------
def _model_param_names(model: Module) -> tuple[dict[int, str], dict[str, Parameter]]:
    """(id(param) -> first name, every name incl. tied aliases -> param)."""
    first = {id(p): n for n, p in model.named_parameters()}
    alias = dict(model._named_parameters_all())
    return first, alias


def _optimizer_portable(path, model: Module, optimizer) -> dict[str, Any]:
    """The optimizer's state dict with its parameters renamed to the model's names (by identity)."""
    first, _ = _model_param_names(model)
    model_names = []
    for oname, p in zip(optimizer.param_names, optimizer.params):
        if id(p) not in first:
            raise CheckpointError(path, f"optimizer parameter {oname!r} is not a parameter of the "
                                        f"model being saved")
        model_names.append(first[id(p)])
    return rename_optimizer_state(path, optimizer.state_dict(), list(optimizer.param_names),
                                  model_names)


def save_checkpoint(path, model: Module, optimizer=None, schedule=None, step: int = 0,
                    metadata: dict[str, Any] | None = None, overwrite: bool = True) -> Path:
    """Save an npformer model (and optionally optimizer, schedule, training step, JSON metadata).
    An existing file at `path` is replaced, as torch.save does; `overwrite=False` keeps it and raises
    FileExistsError, also for a file another program writes there while this one is saved."""
    if not isinstance(model, Module):
        raise TypeError(f"save_checkpoint: model: expected an npformer Module, got "
                        f"{type(model).__name__}")
    check_training_objects("save_checkpoint", optimizer, schedule, optimizer_type=Optimizer,
                           schedule_type=WarmupSchedule, twin="npformer")
    config = getattr(model, "config", None)
    config = config if isinstance(config, TransformerConfig) else None
    opt_state = None if optimizer is None else _optimizer_portable(path, model, optimizer)
    sched_state = None if schedule is None else schedule.state_dict()
    return write_checkpoint(path, writer="npformer", model_class=type(model).__name__, config=config,
                            state=model.state_dict(), optimizer_state=opt_state,
                            schedule_state=sched_state, step=step, metadata=metadata,
                            versions={"numpy": np.__version__}, overwrite=overwrite)


def model_class_for(ckpt: Checkpoint, package: str = "npformer"):
    """The class named by the checkpoint in `package` (npformer or torchformer)."""
    sub = MODEL_CLASSES.get(ckpt.model_class)
    if sub is None:
        raise CheckpointError(ckpt.path, f"model class {ckpt.model_class!r} is not one of "
                                         f"{sorted(MODEL_CLASSES)}; pass model_class=")
    module = importlib.import_module(f"{package}.{sub}")
    return getattr(module, ckpt.model_class)


def load_model(path_or_ckpt, model_class: Callable | None = None) -> Module:
    """A fresh npformer model built from the saved config, holding the saved weights.

    `model_class` overrides the class named in the file (it is called with the config, or with no
    argument when the file has no config).
    """
    ckpt = as_checkpoint(path_or_ckpt)
    if ckpt.config is None and model_class is None:
        raise CheckpointError(ckpt.path, f"has no config (saved from a {ckpt.model_class}); pass "
                                         f"model_class= to build the model")
    cls = model_class if model_class is not None else model_class_for(ckpt)
    try:
        model = cls(ckpt.config) if ckpt.config is not None else cls()
    except (TypeError, ValueError) as e:
        raise CheckpointError(ckpt.path, f"cannot build {getattr(cls, '__name__', cls)}: {e}") from None
    restore(ckpt, model)
    return model


def restore(path_or_ckpt, model: Module, optimizer=None, schedule=None) -> Checkpoint:
    """Load weights (and optimizer / schedule state) into existing objects: all or nothing.

    Everything is validated first (weight names and shapes, optimizer type, parameters, state keys and
    shapes, schedule state); only then is anything written. Returns the Checkpoint.
    """
    ckpt = as_checkpoint(path_or_ckpt)
    if not isinstance(model, Module):
        raise TypeError(f"restore: model: expected an npformer Module, got {type(model).__name__}")
    check_training_objects("restore", optimizer, schedule, optimizer_type=Optimizer,
                           schedule_type=WarmupSchedule, twin="npformer")
    check_weights(ckpt, {n: p.data.shape for n, p in model._named_parameters_all()},
                  type(model).__name__)
    opt_staged = None
    if optimizer is not None:
        if ckpt.optimizer_state is None:
            raise CheckpointError(ckpt.path, "holds no optimizer state")
        check_optimizer_values(ckpt)                        # NaN / negative moments: never resumed
        _, alias = _model_param_names(model)
        by_id = {id(p): n for n, p in zip(optimizer.param_names, optimizer.params)}
        names_from = [n for n in ckpt.optimizer_state["param_names"]]
        names_to = []
        for n in names_from:
            if n not in alias or id(alias[n]) not in by_id:
                raise CheckpointError(ckpt.path, f"optimizer state for {n!r}, which is not a "
                                                 f"parameter of both the model and the optimizer")
            names_to.append(by_id[id(alias[n])])
        sd = rename_optimizer_state(ckpt.path, ckpt.optimizer_state, names_from, names_to)
        try:
            optimizer.check_state_dict(sd)                      # validates, changes nothing
        except (TypeError, ValueError) as e:
            raise CheckpointError(ckpt.path, f"optimizer state does not fit: {e}") from None
        opt_staged = sd
    sched_staged = None
    if schedule is not None:
        if ckpt.schedule_state is None:
            raise CheckpointError(ckpt.path, "holds no schedule state")
        try:
            sched_staged = schedule.check_state_dict(ckpt.schedule_state)
        except (TypeError, ValueError) as e:
            raise CheckpointError(ckpt.path, f"schedule state does not fit: {e}") from None
    # -- all validated: apply --
    model.load_state_dict(ckpt.state)
    if opt_staged is not None:
        optimizer.load_state_dict(opt_staged)
    if sched_staged is not None:
        schedule.load_state_dict(sched_staged)
    return ckpt
