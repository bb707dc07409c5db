"""torch.optim's Adam and AdamW with the twins' argument checks in front (torchformer.guards.optim):
the same update rules, state and options as torch's classes, which they subclass (isinstance tests,
schedulers and state_dict work unchanged), and the same errors as npformer's Adam and AdamW for bad
hyper-parameters, an empty parameter list, a parameter given twice or a NaN/inf gradient at a step."""
from __future__ import annotations

import torch

from torchformer.guards.optim import (
    check_hyper,
    check_params,
    refuse_changed_hyper,
    refuse_nonfinite_gradients,
)

__all__ = ["Adam", "AdamW"]


def _checked_init(opt, base: type, params, lr, betas, eps, weight_decay, amsgrad, options) -> None:
    """Check the arguments as npformer's Adam does, then build `base` (torch's Adam or AdamW) on them
    and register the step's NaN/inf gradient check."""
    who = type(opt).__name__
    params = check_params(who, params)
    hyper = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad)
    check_hyper("adam", who, hyper)
    base.__init__(opt, params, **hyper, **options)
    opt.register_step_pre_hook(refuse_changed_hyper)
    opt.register_step_pre_hook(refuse_nonfinite_gradients)


class Adam(torch.optim.Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, **options) -> None:
        _checked_init(self, torch.optim.Adam, params, lr, betas, eps, weight_decay, amsgrad, options)


class AdamW(torch.optim.AdamW):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, **options) -> None:
        _checked_init(self, torch.optim.AdamW, params, lr, betas, eps, weight_decay, amsgrad, options)
