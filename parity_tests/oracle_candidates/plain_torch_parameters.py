"""Plain Python classes (no torch.nn.Module, no backward of their own) that hold their weights as
torch tensors requiring grad (nn.Parameter, or made with requires_grad=True) and let autograd
find the gradients: weights under attributes, in a dict, in an nn.Linear part; a `parameters()`
method of their own; called through `forward` or `__call__`. Each right class has a wrong twin
(suffix BUG) with one planted mistake; `FrozenFeedForward` holds no tensor that requires grad."""
import math

import torch
from torch import nn


class ParamFeedForward:
    """Weights stored (out, in), as nn.Linear keeps them; called through __call__."""

    def __init__(self, d_model, d_ff):
        self.w_up = torch.randn(d_ff, d_model).mul_(0.1).requires_grad_()
        self.b_up = torch.zeros(d_ff, requires_grad=True)
        self.w_down = torch.randn(d_model, d_ff).mul_(0.1).requires_grad_()
        self.b_down = torch.zeros(d_model, requires_grad=True)

    def __call__(self, x):
        h = torch.relu(x @ self.w_up.T + self.b_up)          # (B, T, d_ff)
        return h @ self.w_down.T + self.b_down                # (B, T, d_model)

    def parameters(self):
        return [self.w_up, self.b_up, self.w_down, self.b_down]


class ParamFeedForwardBUG(ParamFeedForward):
    """BUG: the up projection reshaped where it must be transposed (`view` for `.T`)."""

    def __call__(self, x):
        d_ff, d_model = self.w_up.shape
        h = torch.relu(x @ self.w_up.reshape(d_model, d_ff) + self.b_up)
        return h @ self.w_down.T + self.b_down


class ScaledInitFeedForward:
    """Weights made as `randn(..., requires_grad=True) * 0.1`: no leaf tensors (their .grad stays
    None, which the report notes), also listed in `self.params`; (in, out) layout."""

    def __init__(self, d_model, d_ff):
        self.w1 = torch.randn(d_model, d_ff, requires_grad=True) * 0.1
        self.b1 = torch.zeros(d_ff, requires_grad=True)
        self.w2 = torch.randn(d_ff, d_model, requires_grad=True) * 0.1
        self.b2 = torch.zeros(d_model, requires_grad=True)
        self.params = [self.w1, self.b1, self.w2, self.b2]

    def forward(self, x):
        return torch.relu(x @ self.w1 + self.b1) @ self.w2 + self.b2


class ScaledInitFeedForwardBUG(ScaledInitFeedForward):
    """BUG: the output bias subtracted."""

    def forward(self, x):
        return torch.relu(x @ self.w1 + self.b1) @ self.w2 - self.b2


class LinearPartFeedForward:
    """An nn.Linear part beside a projection of its own held as two nn.Parameters."""

    def __init__(self, d_model, d_ff):
        self.up = nn.Linear(d_model, d_ff)
        self.down_weight = nn.Parameter(torch.randn(d_model, d_ff) * 0.1)
        self.down_bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        return torch.relu(self.up(x)) @ self.down_weight.T + self.down_bias


class LinearPartFeedForwardBUG(LinearPartFeedForward):
    """BUG: the ReLU applied to the output as well."""

    def forward(self, x):
        return torch.relu(super().forward(x))


class ParamDictAttention:
    """Multi-head attention with its four (in, out) projections and biases in one dict of
    nn.Parameters; masks True = may attend; returns (output, per-head weights)."""

    def __init__(self, d_model, num_heads):
        self.h, self.d_head = num_heads, d_model // num_heads
        self.params = {}
        for role in ("q", "k", "v", "o"):
            self.params[f"w_{role}"] = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))
            self.params[f"b_{role}"] = nn.Parameter(torch.zeros(d_model))

    def _heads(self, x, role):
        B, T, _ = x.shape
        y = x @ self.params[f"w_{role}"] + self.params[f"b_{role}"]
        return y.view(B, T, self.h, self.d_head).transpose(1, 2)      # (B, H, T, d_head)

    def scale(self):
        return math.sqrt(self.d_head)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._heads(query, "q"), self._heads(key, "k"), self._heads(value, "v")
        scores = q @ k.transpose(-2, -1) / self.scale()                # (B, H, Tq, Tk)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), float("-inf"))
        weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        B, _, Tq, _ = weights.shape
        ctx = (weights @ v).transpose(1, 2).reshape(B, Tq, self.h * self.d_head)
        return ctx @ self.params["w_o"] + self.params["b_o"], weights

    def parameters(self):
        return list(self.params.values())


class ParamDictAttentionBUG(ParamDictAttention):
    """BUG: scores scaled by the model width, not one head's."""

    def scale(self):
        return math.sqrt(self.h * self.d_head)


class FrozenFeedForward:
    """Weights as plain tensors that require no grad, and no backward: nothing to check."""

    def __init__(self, d_model, d_ff):
        self.w1 = torch.randn(d_model, d_ff)
        self.w2 = torch.randn(d_ff, d_model)

    def forward(self, x):
        return torch.relu(x @ self.w1) @ self.w2
