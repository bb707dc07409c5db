"""Checkpoints: config, weights, optimizer and schedule state in one NumPy .npz file both twins read.

File layout (an uncompressed .npz read with `allow_pickle=False`, so loading never runs code):

    format                      0-d str    "npformer-checkpoint"
    format_version              0-d int64  FORMAT_VERSION
    header                      0-d str    JSON: writer ("npformer" / "torchformer"), model_class,
                                           config (TransformerConfig.to_dict() or null), step,
                                           metadata, model_keys, optimizer ({type, hyperparams,
                                           param_names} or null), schedule (state dict or null),
                                           versions
    model/<name>                array      one per state_dict() key (a tied weight under each name)
    optim/<param>/<key>         array      optimizer state: step (0-d int64), exp_avg, exp_avg_sq,
                                           max_exp_avg_sq, momentum_buffer

Optimizer state is keyed by the *model's* parameter names (an optimizer parameter is matched to the model
by identity when saving), so a state saved by npformer maps onto torch.optim's parameters and back.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from npformer.io.files import atomic_write, check_overwrite, file_path, write_target_problem
from npformer.models.config import TransformerConfig

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "CheckpointError", "CheckpointNotFoundError", "Checkpoint",
           "write_checkpoint", "checkpoint_path", "MODEL_CLASSES", "OPTIMIZER_STATE_KEYS", "HEADER_FIELDS"]

FORMAT_NAME = "npformer-checkpoint"
FORMAT_VERSION = 1
# model class name -> submodule (same file names in npformer and torchformer)
MODEL_CLASSES = {"Transformer": "models.transformer", "CausalLM": "models.causal_lm",
                 "EncoderClassifier": "models.classifier", "BertForMaskedLM": "models.bert",
                 "BertForSequenceClassification": "models.bert"}
OPTIMIZER_STATE_KEYS = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer")
HEADER_FIELDS = {"writer": str, "model_class": str, "config": (dict, type(None)), "step": int,
                  "metadata": dict, "model_keys": list, "optimizer": (dict, type(None)),
                  "schedule": (dict, type(None)), "versions": dict}


class CheckpointError(ValueError):
    """A checkpoint file cannot be used; the message names the file and the problem."""

    def __init__(self, path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"checkpoint {self.path}: {problem}")


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """The checkpoint file does not exist (also a FileNotFoundError)."""


def checkpoint_path(path, *, writing: bool = False) -> Path:
    """`path` as a Path, refused unless it is a str or os.PathLike naming a file; when `writing`, also
    refused (before anything is written) when it is a folder or its folder is missing or a file."""
    p = file_path(path, "checkpoint path")
    problem = write_target_problem(p) if writing else None
    if problem is not None:
        raise CheckpointError(p, problem[1])
    return p


@dataclass
class Checkpoint:
    """Everything a checkpoint file holds, as NumPy arrays and plain Python values.

    state            model weights by state_dict() key (arrays as saved, dtype kept)
    optimizer_state  npformer Optimizer.state_dict() format keyed by model parameter names, or None
    schedule_state   WarmupSchedule.state_dict() format, or None
    """

    path: str
    format_version: int
    writer: str
    model_class: str
    config: TransformerConfig | None
    state: dict[str, np.ndarray]
    optimizer_state: dict[str, Any] | None = None
    schedule_state: dict[str, Any] | None = None
    step: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)


# -- writing (shared by both twins) -------------------------------------------------------------------
def _to_jsonable(v: Any, where: str | None = None) -> Any:
    """`v` as JSON values (tuples become lists, NumPy scalars Python's); a dict key that is not a
    str is a TypeError naming where it is: JSON keeps only string keys, so {3: x} would come back
    as {"3": x} (and {3: x, "3": y} would lose a value)."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            inner = k if where is None else f"{where}[{k!r}]"
            if not isinstance(k, str):
                raise TypeError(f"{where or 'header'}: key {k!r} is a {type(k).__name__}; expected "
                                f"str keys (JSON keeps only strings: it would be read back as "
                                f"{str(k)!r}; use str(key) or a list)")
            out[k] = _to_jsonable(x, inner)
        return out
    if isinstance(v, (list, tuple)):
        return [_to_jsonable(x, f"{where}[{i}]") for i, x in enumerate(v)]
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    return v


def write_checkpoint(path, *, writer: str, model_class: str, config: TransformerConfig | None,
                     state: dict[str, np.ndarray], optimizer_state: dict[str, Any] | None = None,
                     schedule_state: dict[str, Any] | None = None, step: int = 0,
                     metadata: dict[str, Any] | None = None,
                     versions: dict[str, str] | None = None, overwrite: bool = True) -> Path:
    """Write a checkpoint from plain arrays (what both twins' save_checkpoint call).

    The file is written to `.<name>.tmp.<pid>.<thread>` in the same folder, fsynced and renamed into place
    (npformer.io.files.atomic_write), so an interrupted save never leaves a half-written checkpoint under
    `path`, and a failed one (disk full: an OSError) leaves the earlier file there unchanged.
    """
    path = checkpoint_path(path, writing=True)
    overwrite = check_overwrite(overwrite)                # before anything is built or written
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise CheckpointError(path, f"step: expected an int >= 0, got {step!r}")
    if metadata is not None and not isinstance(metadata, dict):
        raise CheckpointError(path, f"metadata: expected a dict of JSON values, got "
                                    f"{type(metadata).__name__}")
    arrays: dict[str, np.ndarray] = {}
    for name, v in state.items():
        a = np.asarray(v)
        if not np.issubdtype(a.dtype, np.floating):
            raise CheckpointError(path, f"weight {name!r}: expected a float array, got {a.dtype}")
        if not np.isfinite(a).all():                   # the loader refuses them: never write one
            raise CheckpointError(path, f"weight {name!r}: expected finite values, got "
                                        f"{int(a.size - np.isfinite(a).sum())} NaN or inf; "
                                        f"nothing was written")
        arrays[f"model/{name}"] = np.asarray(a, order="C")
    opt_header = None
    if optimizer_state is not None:
        opt_header = {"type": optimizer_state["type"],
                      "hyperparams": optimizer_state["hyperparams"],
                      "param_names": list(optimizer_state["param_names"])}
        for pname, st in optimizer_state["state"].items():
            for key, v in st.items():
                if key not in OPTIMIZER_STATE_KEYS:
                    raise CheckpointError(path, f"optimizer state {pname}/{key}: unknown key "
                                                f"(expected one of {OPTIMIZER_STATE_KEYS})")
                a = np.asarray(v, dtype=np.int64) if key == "step" else np.asarray(v)
                arrays[f"optim/{pname}/{key}"] = np.asarray(a, order="C")
    header = {"writer": writer, "model_class": model_class,
              "config": None if config is None else config.to_dict(), "step": int(step),
              "metadata": dict(metadata or {}), "model_keys": list(state),
              "optimizer": opt_header, "schedule": schedule_state,
              "versions": dict(versions or {})}
    try:
        text = json.dumps(_to_jsonable(header))
    except (TypeError, ValueError) as e:
        raise CheckpointError(path, f"metadata/header is not JSON-serialisable: {e}") from None
    arrays["format"] = np.array(FORMAT_NAME)
    arrays["format_version"] = np.array(FORMAT_VERSION, dtype=np.int64)
    arrays["header"] = np.array(text)
    return atomic_write(path, lambda f: np.savez(f, **arrays), replace=overwrite)
