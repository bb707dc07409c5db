"""Optimizers, the paper's warm-up learning-rate schedule and gradient clipping, in NumPy."""
from npformer.optim.adam import Adam, AdamW, adam_update
from npformer.optim.base import Optimizer, named_params
from npformer.optim.clip import clip_grad_norm, nonfinite_norm_message
from npformer.optim.schedule import WarmupSchedule, warmup_lr
from npformer.optim.sgd import SGD

__all__ = ["Optimizer", "named_params", "SGD", "Adam", "AdamW", "adam_update", "warmup_lr",
           "WarmupSchedule", "clip_grad_norm", "nonfinite_norm_message"]
