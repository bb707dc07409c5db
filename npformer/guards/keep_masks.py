"""Dropout's replayed keep-masks: a bool numpy array (True = keep) of exactly the input's shape.

Registered for Dropout under two names: "replay" checks a mask's type when `Dropout.replay(mask)`
queues it; "replayed_mask" checks its shape when the next forward takes it (the input is known
only then, also inside a model, where children run unchecked).
"""
from __future__ import annotations

import numpy as np

from npformer.guards.register import checks
from npformer.layers.dropout import Dropout


def check_keep_mask(name: str, mask, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """`mask` when it is a bool numpy array, of exactly `shape` when given."""
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        got = (f"array of shape {mask.shape} and dtype {mask.dtype}" if isinstance(mask, np.ndarray)
               else type(mask).__name__)
        raise TypeError(f"{name}: expected a bool numpy array (True = keep), got {got}")
    if shape is not None and mask.shape != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)} (the input's), got {mask.shape}")
    return mask


@checks("replay", Dropout)
def replay_mask(m, mask) -> np.ndarray:
    return check_keep_mask("mask", mask)


@checks("replayed_mask", Dropout)
def replayed_mask(m, mask, shape) -> np.ndarray:
    return check_keep_mask("mask (queued by Dropout.replay)", mask, shape)
