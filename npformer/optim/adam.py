"""Adam and AdamW (torch.optim's rules, operation for operation), in plain NumPy.

The speed variant (cache blocks, worker threads) is npformer.fast.adam.BlockedAdam: same results.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from npformer.guards.optim import check_adam_hyper
from npformer.optim.base import Optimizer

__all__ = ["Adam", "AdamW", "adam_update"]


def adam_update(theta: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray,
                vmax: np.ndarray | None, t: float, *, lr: float, betas: tuple[float, float],
                eps: float, weight_decay: float, decoupled: bool) -> None:
    """One Adam (decoupled: AdamW) step on theta, m, v (and vmax) in place, given the gradient g and
    the step number t. All arrays share theta's shape; each line is the torch operation it mirrors,
    in torch's order, so the results are equal to torch's bit for bit."""
    beta1, beta2 = betas
    if weight_decay != 0:
        if decoupled:
            theta *= 1 - lr * weight_decay                      # AdamW: theta <- (1 - gamma lambda) theta
        else:
            g = g + weight_decay * theta                        # Adam: the L2 term joins the gradient
    w = 1 - beta1                                               # m <- lerp(m, g, w), torch's two forms:
    if abs(w) < 0.5:
        m += w * (g - m)                                        #   m + w (g - m)
    else:
        m[...] = g - (g - m) * (1 - w)                          #   g - (g - m)(1 - w)
    v *= beta2                                                  # v <- beta2 v + (1 - beta2) g^2
    v += (1 - beta2) * g * g
    bias_correction1 = 1 - beta1 ** t
    bias_correction2 = 1 - beta2 ** t
    step_size = lr / bias_correction1
    if vmax is not None:                                        # amsgrad: v_t becomes max(vmax, v_t)
        np.maximum(vmax, v, out=vmax)
        v = vmax
    denom = np.sqrt(v) / bias_correction2 ** 0.5 + eps          # sqrt(v / (1 - beta2^t)) + eps
    theta += m * -step_size / denom                             # theta <- theta - step_size m / denom


class Adam(Optimizer):
    r"""Adam (Kingma & Ba 2015), optionally AMSGrad, with L2 weight decay added to the gradient.

    For each parameter, at step t (t = 1, 2, ...; m_0 = v_0 = 0):

        g_t     = grad + lambda * theta_{t-1}                     (when lambda != 0)
        m_t     = beta1 * m_{t-1} + (1 - beta1) * g_t             (computed as torch.lerp)
        v_t     = beta2 * v_{t-1} + (1 - beta2) * g_t^2
        vmax_t  = max(vmax_{t-1}, v_t)                            (amsgrad; v_t below becomes vmax_t)
        theta_t = theta_{t-1} - (gamma / (1 - beta1^t)) * m_t / (sqrt(v_t) / sqrt(1 - beta2^t) + eps)

    Note where eps sits: it is added to sqrt(v_t / (1 - beta2^t)), the bias-corrected root, and the
    first-moment correction is folded into the step size, exactly as torch does.

    State per parameter: "step" (int t), "exp_avg" m_t, "exp_avg_sq" v_t, and "max_exp_avg_sq"
    vmax_t with amsgrad.
    """

    HYPER = ("lr", "betas", "eps", "weight_decay", "amsgrad")
    DECOUPLED = False

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad)

    def _check_hyper(self, h: dict[str, Any]) -> None:
        check_adam_hyper(type(self).__name__, h)

    def _state_keys(self, h: dict[str, Any]) -> tuple[str, ...]:
        keys = ("step", "exp_avg", "exp_avg_sq")
        return keys + ("max_exp_avg_sq",) if h["amsgrad"] else keys

    def init_state(self, theta: np.ndarray, state: dict) -> None:
        """Lazy initialisation at a parameter's first step: t = 0, m_0 = v_0 = 0."""
        state["step"] = 0
        state["exp_avg"] = np.zeros_like(theta)
        state["exp_avg_sq"] = np.zeros_like(theta)
        if self.amsgrad:
            state["max_exp_avg_sq"] = np.zeros_like(theta)

    def _update(self, theta: np.ndarray, g: np.ndarray, state: dict) -> None:
        if not state:
            self.init_state(theta, state)
        state["step"] += 1
        adam_update(theta, g, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq"),
                    float(state["step"]), **self.update_args())

    def update_args(self) -> dict:
        """The hyper-parameters adam_update takes, as keywords."""
        return dict(lr=self.lr, betas=self.betas, eps=self.eps, weight_decay=self.weight_decay,
                    decoupled=self.DECOUPLED)


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter 2019), torch.optim.AdamW's rule.

    The decay shrinks the parameter before the moment updates and never enters m or v:

        theta'  = (1 - gamma * lambda) * theta_{t-1}
        m_t, v_t as in Adam with g_t = grad (no L2 term)
        theta_t = theta' - (gamma / (1 - beta1^t)) * m_t / (sqrt(v_t) / sqrt(1 - beta2^t) + eps)
    """

    DECOUPLED = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad)
