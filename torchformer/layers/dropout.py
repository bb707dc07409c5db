"""Inverted dropout whose masks can be recorded and replayed (twin of npformer.layers.dropout).

Training:  y = x * m / (1 - p),  m ~ Bernoulli(1 - p) (True keeps the entry);  eval or p == 0: y = x.
Autograd gives dL/dx = dL/dy * m / (1 - p).

Two ways to drop, the same function:

- unrecorded (the default, `dropout_unrecorded`): the fastest form for the device, keeping no mask
  for later (`last_mask` is None). On CUDA that is `F.dropout`, one fused kernel. On the CPU
  F.dropout's Bernoulli draw is slow (torch 2.13: 2.0 ms for 8x64x512 floats against 1.0 ms for
  torch.rand), so the scaled keep-noise is drawn in place, n = (U >= p) / (1 - p), and y = x * n:
  forward 1.1 ms against F.dropout's 2.0 ms, forward + backward 1.5 against 2.4 (one thread).
- recorded (`record_masks = True`, switched on for a whole model by `set_record_masks(model, True)`):
  the bool keep-mask is drawn explicitly, `torch.rand(x.shape) >= p` from torch's RNG, and kept in
  `last_mask`, like npformer, so `collect_dropout_masks` can hand it to the other twin (both walk a
  whole model: torchformer.checks.dropout_masks, tooling above the models). A module given its
  own `rng` (a torch.Generator) always draws this way: F.dropout cannot take a generator. The models
  give every Dropout one generator seeded from the model's seed (seed + 1), so a seed fixes a CPU run
  bit for bit without torch.manual_seed; only code traced by torch.compile (which cannot trace a
  generator) drops from torch's global RNG instead.

`replay(mask)` (bool numpy array or tensor) queues a mask for the next forward, whatever the mode;
`replay_dropout_masks` does it for a whole model, so replaying needs no switch. The mask's type is
checked when it is queued and its shape at the forward that takes it, by the "replay" and
"replayed_mask" checks torchformer.guards.keep_masks registers for Dropout.

Recording is opt-in because it costs: a bool mask per site kept alive until the next forward, and
on CUDA three extra kernels per site.

Attention-probability dropout lives inside MultiHeadAttention as its child `attn_dropout`: with
recording on, or a replayed mask queued, the attention takes its explicit path (SDPA's own dropout
can neither record nor replay masks).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from torchformer.layers import compile_ops
from torchformer.layers.module import Module, compiling


def dropout_apply(x: torch.Tensor, mask: torch.Tensor, p: float) -> torch.Tensor:
    """x * mask / (1 - p) with a bool keep-mask (dtype of x kept, autocast-safe)."""
    return x * mask * (1.0 / (1.0 - p))


def dropout_unrecorded(x: torch.Tensor, p: float) -> torch.Tensor:
    """Training-mode inverted dropout whose mask is not kept: F.dropout off the CPU; on the CPU
    x * n with the noise n = (U >= p) / (1 - p), U ~ U[0, 1) drawn in x's dtype and turned into n in
    place (faster there than F.dropout's Bernoulli draw; see the module docstring)."""
    if x.device.type != "cpu":
        return F.dropout(x, p, training=True)
    if compiling():                                  # opaque draw: see torchformer/compile_ops.py
        return x * compile_ops.keep_noise(x.detach(), p)
    noise = torch.rand_like(x).ge_(p).mul_(1.0 / (1.0 - p))            # (x.shape) 0 or 1/(1-p)
    return x * noise


class Dropout(Module):
    """Inverted dropout with drop probability `p`.

    `rng`: None (torch's global RNG, seeded by torch.manual_seed) or a torch.Generator, which must
    live on the input's device (masks are then always drawn explicitly and recorded).
    `record_masks`: False (dropout_unrecorded) or True (explicit masks kept in `last_mask`).
    `last_mask`: bool tensor of the last recorded or replayed training forward (None in eval, at
    p == 0, or after an unrecorded forward); `last_unrecorded`: True when the last forward dropped without
    recording (dropout_unrecorded here, or SDPA's dropout for an attention's `attn_dropout`).
    """

    def __init__(self, p: float = 0.1, rng: torch.Generator | None = None):
        super().__init__()
        self.p = float(p)
        self.rng = rng
        self.record_masks = False
        self.last_mask: torch.Tensor | None = None
        self.last_unrecorded = False
        self._replay = None

    @property
    def active(self) -> bool:
        """True when forward drops entries (training mode and p > 0)."""
        return self.training and self.p > 0.0

    def replay(self, mask) -> None:
        """Make the next forward use `mask` (bool, the input's shape; numpy or torch) instead of
        drawing one. The dtype is checked now, the shape at that forward."""
        self.checked("replay", self._queue, mask)

    def _queue(self, mask) -> None:
        self._replay = mask

    @property
    def replay_pending(self) -> bool:
        return self._replay is not None

    @property
    def records(self) -> bool:
        """True when an unreplayed training forward draws (and keeps) an explicit mask: recording
        on, or a generator given (except while torch.compile traces: a generator cannot be traced,
        so compiled code drops from torch's global RNG, seeded by torch.manual_seed)."""
        return self.record_masks or (self.rng is not None and not compiling())

    def _note(self, mask, unrecorded: bool) -> None:
        """Set last_mask / last_unrecorded, writing only what changes: nn.Module.__setattr__ costs
        a few microseconds, and every Dropout of a model runs this on every forward."""
        if mask is not None or self.last_mask is not None:
            self.last_mask = mask
        if self.last_unrecorded != unrecorded:
            self.last_unrecorded = unrecorded

    def mark_unrecorded(self) -> None:
        """Note that the caller dropped without recording (e.g. inside SDPA): last_mask None."""
        self._note(None, self.active)

    def draw_mask(self, shape, device) -> torch.Tensor | None:
        """The keep-mask for an input of `shape`: the replayed one if queued, else a fresh draw;
        None when inactive (eval or p == 0). Sets last_mask."""
        if not self.active:
            if self._replay is not None:
                raise RuntimeError("Dropout.forward: a replayed mask is queued but the module is "
                                   f"{'in eval mode' if not self.training else 'at p == 0'}, "
                                   "where it draws no mask; replay masks only into the same mode "
                                   "they were recorded in")
            self._note(None, False)
            return None
        if self._replay is not None:
            queued, self._replay = self._replay, None       # used once, also when refused
            mask = self.checked("replayed_mask", torch.as_tensor, queued, shape)
            mask = mask.to(device)
        else:
            gen_device = self.rng.device if self.rng is not None else device
            mask = torch.rand(tuple(shape), generator=self.rng, device=gen_device) >= self.p
            mask = mask.to(device)
        self._note(mask, False)
        return mask

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.active and self._replay is None and not self.records:
            self.mark_unrecorded()
            return dropout_unrecorded(x, self.p)                           # no mask kept
        mask = self.draw_mask(x.shape, x.device)
        if mask is None:
            return x                                                       # identity
        return dropout_apply(x, mask, self.p)                              # x * m / (1 - p)

    def extra_repr(self) -> str:
        return f"p={self.p}"
