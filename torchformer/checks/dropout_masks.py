"""Record and replay a whole model's dropout masks, by dotted module name (the twin of
npformer.checks.dropout_masks).

    set_record_masks(model, True)           every Dropout keeps the mask it draws
    masks = collect_dropout_masks(model)    {name: keep-mask} of the last forward
    replay_dropout_masks(model, masks)      the next forward uses them instead of drawing new ones

Tooling around the model, not part of it: training-mode parity copies masks between the twins with
these (either twin's masks replay into the other), and the tests hold a forward fixed with them.
Each Dropout records its own mask (`last_mask`, when recording is on) and takes a mask for its next
forward (`replay`); these walk the model. Recording is off by default (the faster, unrecorded
dropout runs then), so a replay needs no switch but a collect does. A model wrapped by torch.compile
or DDP is walked inside its wrapper, so the names are the plain model's (no `_orig_mod.` prefix).
"""
from __future__ import annotations

import torch
from torch import nn

from torchformer.guards.keep_masks import check_keep_mask
from torchformer.layers.dropout import Dropout
from torchformer.models.bridge import unwrap

__all__ = ["set_record_masks", "collect_dropout_masks", "replay_dropout_masks"]


def set_record_masks(model: nn.Module, flag: bool = True) -> nn.Module:
    """Switch every Dropout in `model` between explicit, recorded masks (True; attention dropout
    then takes the explicit attention path) and unrecorded dropout (False, the default)."""
    for m in model.modules():
        if isinstance(m, Dropout):
            m.record_masks = bool(flag)
    return model


def collect_dropout_masks(model: nn.Module) -> dict[str, torch.Tensor]:
    """{dotted module name: bool keep-mask tensor} of every Dropout that drew (or replayed) a mask in
    the last forward; inactive ones are left out. The root module is named "".

    Raises RuntimeError when an active Dropout dropped without recording in the last forward (its
    mask is gone): switch recording on with set_record_masks(model, True) before that forward.
    """
    dropouts = [(name, m) for name, m in unwrap(model).named_modules(remove_duplicate=False)
                if isinstance(m, Dropout)]
    unrecorded = [name for name, m in dropouts if m.last_unrecorded]
    if unrecorded:
        raise RuntimeError(f"collect_dropout_masks: {unrecorded} dropped without recording in the "
                           f"last forward and kept no mask; call set_record_masks(model, True) "
                           f"before the forward whose masks you want")
    return {name: m.last_mask for name, m in dropouts if m.last_mask is not None}


def replay_dropout_masks(model: nn.Module, masks: dict) -> None:
    """Queue `masks` ({dotted module name: bool mask}, numpy arrays or tensors, as either twin's
    collect_dropout_masks returns) for the next forward. Every name and mask is checked before
    anything is queued."""
    if not isinstance(masks, dict):
        raise TypeError(f"masks: expected a dict {{Dropout module name: bool mask}} (what "
                        f"collect_dropout_masks returns), got {type(masks).__name__}")
    dropouts = {name: m for name, m in unwrap(model).named_modules(remove_duplicate=False)
                if isinstance(m, Dropout)}
    unknown = sorted(k for k in masks if k not in dropouts)
    if unknown:
        raise ValueError(f"masks: unknown Dropout module names {unknown}; expected names from "
                         f"{sorted(dropouts)}")
    for name, mask in masks.items():
        check_keep_mask(f"masks[{name!r}]", mask)
    for name, mask in masks.items():
        dropouts[name].replay(mask)
