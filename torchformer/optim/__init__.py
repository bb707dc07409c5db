"""Optimizers, warm-up schedule and gradient clipping for torchformer.

`SGD`, `Adam` and `AdamW` are `torch.optim`'s classes with the twins' argument checks in front
(torchformer.optim.sgd and .adam; the same errors as npformer's): npformer.optim reproduces their
update rules, and the parity suite checks that. `warmup_lr`, `WarmupSchedule` and `clip_grad_norm`
have npformer's signatures.
"""
from torch.optim import Optimizer

from torchformer.optim.adam import Adam, AdamW
from torchformer.optim.clip import clip_grad_norm
from torchformer.optim.schedule import WarmupSchedule, load_portable_schedule_state, portable_schedule_state, warmup_lr
from torchformer.optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "warmup_lr", "WarmupSchedule", "clip_grad_norm",
           "portable_schedule_state", "load_portable_schedule_state"]
