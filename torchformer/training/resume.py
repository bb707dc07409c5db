"""Saving and resuming a torchformer training run: npformer.training.resume with torchformer's parts.

    save_training_state(path, state, metadata=None, overwrite=True)   one checkpoint file (npformer's format)
    load_training_state(path, device=None)            -> TrainState (torch model, torch.optim.Adam, ...)
"""
from __future__ import annotations

from npformer.training import resume
from npformer.training.resume import ResumeBackend, TrainState
from torchformer.io import checkpoint as ck
from torchformer.training.train import make_optimizer

__all__ = ["TORCH", "TrainState", "save_training_state", "load_training_state"]

TORCH = ResumeBackend("torch", ck.save_checkpoint, ck.load_model, ck.restore, make_optimizer)


def save_training_state(path, state: TrainState, metadata: dict | None = None, overwrite: bool = True):
    """Write a torchformer run's state (model, torch.optim.Adam, schedule, stream, dropout generator,
    step, TrainConfig, task) as one checkpoint, atomically (`overwrite=False`: see npformer's)."""
    return resume.save_training_state(path, state, metadata=metadata, backend=TORCH,
                                      overwrite=overwrite)


def load_training_state(path, device=None) -> TrainState:
    """A TrainState (torchformer model on `device`, torch.optim.Adam, WarmupSchedule, batch stream,
    dropout generator, step, TrainConfig, task) to continue a run."""
    return resume.load_training_state(path, backend=TORCH, device=device)
