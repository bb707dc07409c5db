"""Dropout's replayed keep-masks: a bool numpy array or bool tensor (True = keep) of exactly the
input's shape (the twin of npformer.guards.keep_masks, which takes numpy arrays only).

Registered for Dropout under two names, as npformer's: "replay" checks a mask's type when
`Dropout.replay(mask)` queues it; "replayed_mask" checks its shape when the next forward takes it
(the input is known only then, also inside a model, where children run unchecked).
"""
from __future__ import annotations

import numpy as np
import torch

from torchformer.guards.register import checks
from torchformer.layers.dropout import Dropout


def check_keep_mask(name: str, mask, shape=None):
    """`mask` when it is a bool numpy array or bool tensor, of exactly `shape` when given."""
    ok = ((isinstance(mask, np.ndarray) and mask.dtype == np.bool_)
          or (isinstance(mask, torch.Tensor) and mask.dtype == torch.bool))
    if not ok:
        got = (f"dtype {mask.dtype}" if isinstance(mask, (np.ndarray, torch.Tensor))
               else type(mask).__name__)
        raise TypeError(f"{name}: expected a bool numpy array or bool tensor (True = keep), got {got}")
    if shape is not None and tuple(mask.shape) != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)} (the input's), got "
                         f"{tuple(mask.shape)}")
    return mask


@checks("replay", Dropout)
def replay_mask(m, mask):
    return (check_keep_mask("mask", mask),)


@checks("replayed_mask", Dropout)
def replayed_mask(m, mask, shape):
    return (check_keep_mask("mask (queued by Dropout.replay)", mask, shape),)
