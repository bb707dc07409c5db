"""Candidates no guessing reaches; the adapter files beside them (hooked_adapter_*.py) say how
to build, call and read them. Correct unless a docstring says BUG."""
import numpy as np
import torch
import torch.nn as nn


class DictBatchAttention(nn.Module):
    """Multi-head attention built from a (d_model, heads) tuple, called on a dict, weights kept
    (in, out) in a ParameterDict under letters, no biases."""

    def __init__(self, dims):
        super().__init__()
        d, self.h = dims
        self.P = nn.ParameterDict({n: nn.Parameter(torch.randn(d, d)) for n in "abcd"})

    def forward(self, batch, keep=None):
        q, k, v = batch["q"] @ self.P["a"], batch["k"] @ self.P["b"], batch["v"] @ self.P["c"]
        B, Tq, D = q.shape
        split = lambda t: t.view(B, -1, self.h, D // self.h).transpose(1, 2)  # noqa: E731
        y = torch.nn.functional.scaled_dot_product_attention(
            split(q), split(k), split(v), attn_mask=None if keep is None else keep.bool())
        return y.transpose(1, 2).reshape(B, Tq, D) @ self.P["d"]


class DictBatchAttentionBad(DictBatchAttention):
    """BUG: the output projection uses the value matrix."""

    def forward(self, batch, keep=None):
        d = self.P["d"]
        self.P["d"] = self.P["c"]
        try:
            return super().forward(batch, keep)
        finally:
            self.P["d"] = d


class TupleStateNorm:
    """NumPy LayerNorm keeping (gain, shift) in a tuple, with run/back instead of forward/backward."""

    bad = False

    def __init__(self, width):
        self.state = (np.ones(width), np.zeros(width))
        self.dstate = (None, None)

    def run(self, x):
        mu = x.mean(-1, keepdims=True)
        self.inv = 1.0 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
        self.xhat = (x - mu) * self.inv
        return self.state[0] * self.xhat + self.state[1]

    def back(self, dout):
        lead = tuple(range(dout.ndim - 1))
        dg = dout.sum(lead) if self.bad else (dout * self.xhat).sum(lead)
        self.dstate = (dg, dout.sum(lead))
        dxhat = dout * self.state[0]
        D = dout.shape[-1]
        return self.inv / D * (D * dxhat - dxhat.sum(-1, keepdims=True)
                               - self.xhat * (dxhat * self.xhat).sum(-1, keepdims=True))


class TupleStateNormBad(TupleStateNorm):
    """BUG: the gradient of the gain forgets x-hat."""

    bad = True


def pair_attention(qk, v, mask=None):
    """sdpa taking (q, k) as one pair; returns (output, weights)."""
    q, k = qk
    s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v, w


def pair_attention_bad(qk, v, mask=None):
    """BUG: ignores the mask."""
    return pair_attention(qk, v, None)
