"""Optimizers, warm-up schedule and gradient clipping for torchformer: torch.optim itself.

`SGD`, `Adam` and `AdamW` are `torch.optim`'s classes, re-exported: npformer.optim reproduces their
update rules, and the parity suite checks that. `warmup_lr`, `WarmupSchedule` and `clip_grad_norm`
have npformer's signatures.
"""
from torch.optim import SGD, Adam, AdamW, Optimizer

from torchformer.optim.clip import clip_grad_norm
from torchformer.optim.schedule import WarmupSchedule, load_portable_schedule_state, portable_schedule_state, warmup_lr

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "warmup_lr", "WarmupSchedule", "clip_grad_norm",
           "portable_schedule_state", "load_portable_schedule_state"]
