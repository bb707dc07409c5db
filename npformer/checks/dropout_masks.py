"""Record and replay a whole model's dropout masks, by dotted module name.

    masks = collect_dropout_masks(model)    {name: keep-mask} of the last forward
    replay_dropout_masks(model, masks)      the next forward uses them instead of drawing new ones

Tooling around the model, not part of it: gradient checks hold the masks fixed with these, so the
loss is one deterministic function of the inputs; training-mode parity copies them into the torch
twin; data parallelism's tests join its replicas' masks. Each Dropout records its own mask
(`last_mask`) and takes a mask for its next forward (`replay`); these two walk the model.
"""
from __future__ import annotations

import numpy as np

from npformer.guards.keep_masks import check_keep_mask
from npformer.layers.dropout import Dropout
from npformer.layers.module import Module

__all__ = ["collect_dropout_masks", "replay_dropout_masks"]


def collect_dropout_masks(model: Module) -> dict[str, np.ndarray]:
    """{dotted module name: keep-mask} of every Dropout that drew (or replayed) a mask in the last
    forward. Modules that were inactive (eval, p == 0) are left out. The root module is named ""."""
    return {name: m.last_mask for name, m in model.named_modules()
            if isinstance(m, Dropout) and m.last_mask is not None}


def replay_dropout_masks(model: Module, masks: dict[str, np.ndarray]) -> None:
    """Queue `masks` ({dotted module name: bool mask}, as collect_dropout_masks returns) for the next
    forward of `model`. Every name and mask is checked before anything is queued."""
    if not isinstance(masks, dict):
        raise TypeError(f"masks: expected a dict {{Dropout module name: bool mask}} (what "
                        f"collect_dropout_masks returns), got {type(masks).__name__}")
    dropouts = {name: m for name, m in model.named_modules() if isinstance(m, Dropout)}
    unknown = sorted(k for k in masks if k not in dropouts)
    if unknown:
        raise ValueError(f"masks: unknown Dropout module names {unknown}; expected names from "
                         f"{sorted(dropouts)}")
    for name, mask in masks.items():
        check_keep_mask(f"masks[{name!r}]", mask)
    for name, mask in masks.items():
        dropouts[name].replay(mask)
