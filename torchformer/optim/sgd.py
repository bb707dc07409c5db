"""torch.optim.SGD with the twins' argument checks in front (torchformer.guards.optim): the same update
rule, state and options as torch's class, which it subclasses (isinstance tests, schedulers and
state_dict work unchanged), and the same errors as npformer's SGD for bad hyper-parameters, an empty
parameter list, a parameter given twice or a NaN/inf gradient at a step."""
from __future__ import annotations

import torch

from torchformer.guards.optim import (
    check_hyper,
    check_params,
    refuse_changed_hyper,
    refuse_nonfinite_gradients,
)

__all__ = ["SGD"]


class SGD(torch.optim.SGD):
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, **options) -> None:
        who = type(self).__name__
        params = check_params(who, params)
        check_hyper("sgd", who, dict(lr=lr, momentum=momentum, dampening=dampening,
                                     weight_decay=weight_decay, nesterov=nesterov))
        super().__init__(params, lr=lr, momentum=momentum, dampening=dampening,
                         weight_decay=weight_decay, nesterov=nesterov, **options)
        self.register_step_pre_hook(refuse_changed_hyper)
        self.register_step_pre_hook(refuse_nonfinite_gradients)
