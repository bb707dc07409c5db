"""torch.optim's Adam and AdamW with the twins' argument checks in front (torchformer.guards.optim):
the same update rules, state and options as torch's classes, which they subclass (isinstance tests,
schedulers and state_dict work unchanged), and the same errors as npformer's Adam and AdamW for bad
hyper-parameters, an empty parameter list, a parameter given twice or a NaN/inf gradient at a step."""
from __future__ import annotations

import torch

from torchformer.guards.optim import check_hyper, check_params, refuse_nonfinite_gradients

__all__ = ["Adam", "AdamW"]


class Adam(torch.optim.Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, **options) -> None:
        who = type(self).__name__
        params = check_params(who, params)
        check_hyper("adam", who, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad))
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, **options)
        self.register_step_pre_hook(refuse_nonfinite_gradients)


class AdamW(torch.optim.AdamW):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, **options) -> None:
        who = type(self).__name__
        params = check_params(who, params)
        check_hyper("adam", who, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad))
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, **options)
        self.register_step_pre_hook(refuse_nonfinite_gradients)
