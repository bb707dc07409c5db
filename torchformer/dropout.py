"""Inverted dropout whose masks can be recorded and replayed (twin of npformer.dropout).

Training:  y = x * m / (1 - p),  m ~ Bernoulli(1 - p) (True keeps the entry);  eval or p == 0: y = x.
Autograd gives dL/dx = dL/dy * m / (1 - p).

By default the keep-mask is drawn explicitly, `torch.rand(x.shape) >= p` from torch's RNG (or the
module's `rng`, a torch.Generator), and kept in `last_mask`, exactly like npformer: masks can be
collected from either twin and replayed into the other. `replay(mask)` (bool numpy array or tensor)
queues a mask for the next forward. With `record_masks = False` (see `set_record_masks`) an unreplayed
forward calls the fused `F.dropout` instead (faster; `last_mask` is then None).

Attention-probability dropout lives inside MultiHeadAttention as its child `attn_dropout`; a replayed
mask there makes the attention take its explicit path (SDPA's own dropout cannot replay masks).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from torchformer.validation import check_float, describe


def _check_p(name: str, p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name}: expected a float in [0, 1), got {type(p).__name__}")
    if not 0.0 <= float(p) < 1.0:
        raise ValueError(f"{name}: expected a float in [0, 1), got {p!r}")
    return float(p)


def _check_keep_mask(name: str, mask, shape=None):
    """A bool keep-mask (numpy array or tensor), of exactly `shape` when given."""
    ok = ((isinstance(mask, np.ndarray) and mask.dtype == np.bool_)
          or (isinstance(mask, torch.Tensor) and mask.dtype == torch.bool))
    if not ok:
        raise TypeError(f"{name}: expected a bool numpy array or bool tensor (True = keep), got "
                        f"{describe(mask)}")
    if shape is not None and tuple(mask.shape) != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)} (the input's), got "
                         f"{tuple(mask.shape)}")
    return mask


def dropout_apply(x: torch.Tensor, mask: torch.Tensor, p: float) -> torch.Tensor:
    """x * mask / (1 - p) with a bool keep-mask (dtype of x kept, autocast-safe)."""
    return x * mask * (1.0 / (1.0 - p))


class Dropout(nn.Module):
    """Inverted dropout with drop probability `p`.

    `rng`: None (torch's global RNG, seeded by torch.manual_seed) or a torch.Generator, which must
    live on the input's device. `last_mask`: bool tensor of the last training forward (None in eval,
    at p == 0, or after a fused forward).
    """

    def __init__(self, p: float = 0.1, rng: torch.Generator | None = None):
        super().__init__()
        self.p = _check_p("p", p)
        if rng is not None and not isinstance(rng, torch.Generator):
            raise TypeError(f"rng: expected a torch.Generator or None, got {type(rng).__name__}")
        self.rng = rng
        self.record_masks = True
        self.last_mask: torch.Tensor | None = None
        self._replay = None

    @property
    def active(self) -> bool:
        """True when forward drops entries (training mode and p > 0)."""
        return self.training and self.p > 0.0

    def replay(self, mask) -> None:
        """Make the next forward use `mask` (bool, the input's shape; numpy or torch) instead of
        drawing one. The dtype is checked now, the shape at that forward."""
        self._replay = _check_keep_mask("mask", mask)

    @property
    def replay_pending(self) -> bool:
        return self._replay is not None

    def draw_mask(self, shape, device) -> torch.Tensor | None:
        """The keep-mask for an input of `shape`: the replayed one if queued, else a fresh draw;
        None when inactive (eval or p == 0). Sets last_mask."""
        if not self.active:
            if self._replay is not None:
                raise RuntimeError("Dropout.forward: a replayed mask is queued but the module is "
                                   f"{'in eval mode' if not self.training else 'at p == 0'}, "
                                   "where it draws no mask; replay masks only into the same mode "
                                   "they were recorded in")
            self.last_mask = None
            return None
        if self._replay is not None:
            mask = _check_keep_mask("mask (queued by Dropout.replay)", self._replay, shape)
            self._replay = None
            mask = torch.as_tensor(mask).to(device)
        else:
            gen_device = self.rng.device if self.rng is not None else device
            mask = torch.rand(tuple(shape), generator=self.rng, device=gen_device) >= self.p
            mask = mask.to(device)
        self.last_mask = mask
        return mask

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_float("x", x)
        if self.active and self._replay is None and not self.record_masks:
            self.last_mask = None
            return F.dropout(x, self.p, training=True)                     # fused, unrecorded
        mask = self.draw_mask(x.shape, x.device)
        if mask is None:
            return x                                                       # identity
        return dropout_apply(x, mask, self.p)                              # x * m / (1 - p)

    def extra_repr(self) -> str:
        return f"p={self.p}"


def set_record_masks(model: nn.Module, flag: bool) -> nn.Module:
    """Switch every Dropout in `model` between explicit, recorded masks (True, the default) and the
    fused F.dropout (False)."""
    for m in model.modules():
        if isinstance(m, Dropout):
            m.record_masks = bool(flag)
    return model


def collect_dropout_masks(model: nn.Module) -> dict[str, torch.Tensor]:
    """{dotted module name: bool keep-mask tensor} of every Dropout that drew (or replayed) a mask in
    the last forward; inactive ones are left out. The root module is named ""."""
    return {name: m.last_mask for name, m in model.named_modules(remove_duplicate=False)
            if isinstance(m, Dropout) and m.last_mask is not None}


def replay_dropout_masks(model: nn.Module, masks: dict) -> None:
    """Queue `masks` ({dotted module name: bool mask}, numpy arrays or tensors, as either twin's
    collect_dropout_masks returns) for the next forward. Everything is checked before anything is
    queued."""
    dropouts = {name: m for name, m in model.named_modules(remove_duplicate=False)
                if isinstance(m, Dropout)}
    unknown = sorted(k for k in masks if k not in dropouts)
    if unknown:
        raise ValueError(f"masks: unknown Dropout module names {unknown}; expected names from "
                         f"{sorted(dropouts)}")
    for name, mask in masks.items():
        _check_keep_mask(f"masks[{name!r}]", mask)
    for name, mask in masks.items():
        dropouts[name].replay(mask)
