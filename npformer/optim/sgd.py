"""SGD with momentum, Nesterov momentum and L2 weight decay (torch.optim.SGD's rule)."""
from __future__ import annotations

from typing import Any

import numpy as np

from npformer.guards.optim import check_sgd_hyper
from npformer.optim.base import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent with optional momentum, Nesterov momentum and L2 weight decay.

    For each parameter, at step t:

        g_t    = grad + lambda * theta_{t-1}                       (when lambda != 0)
        b_1    = g_1                                               (first step: the buffer is g itself)
        b_t    = mu * b_{t-1} + (1 - tau) * g_t                    (t > 1, when mu != 0)
        d_t    = g_t + mu * b_t  if nesterov  else  b_t            (d_t = g_t when mu == 0)
        theta_t = theta_{t-1} - gamma * d_t

    State per parameter: "momentum_buffer" b_t (only when mu != 0; torch keeps no step count for SGD).
    """

    HYPER = ("lr", "momentum", "dampening", "weight_decay", "nesterov")

    def __init__(self, params, lr: float, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False) -> None:
        super().__init__(params, lr=lr, momentum=momentum, dampening=dampening,
                         weight_decay=weight_decay, nesterov=nesterov)

    def _check_hyper(self, h: dict[str, Any]) -> None:
        check_sgd_hyper(type(self).__name__, h)

    def _state_keys(self, h: dict[str, Any]) -> tuple[str, ...]:
        return ("momentum_buffer",) if h["momentum"] != 0 else ()

    def _update(self, theta: np.ndarray, g: np.ndarray, state: dict) -> None:
        lr, mu, tau, wd = self.lr, self.momentum, self.dampening, self.weight_decay
        if wd != 0:
            g = g + wd * theta                                  # (shape of theta), a new array
        if mu != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = g.copy()                                  # b_1 = g_1 (not (1 - tau) g_1)
                state["momentum_buffer"] = buf
            else:
                buf *= mu                                       # b = mu b + (1 - tau) g, in place
                buf += (1 - tau) * g
            g = g + mu * buf if self.nesterov else buf
        theta += -lr * g                                        # theta <- theta - gamma d
