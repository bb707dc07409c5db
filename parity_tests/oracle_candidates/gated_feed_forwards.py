"""Gated feed-forwards (GLU family): a third projection multiplied into the hidden activation,
SwiGLU `w2(silu(w1(x)) * w3(x))` and GEGLU with the two up-projections packed in one (2F, D) Linear.
Not the paper's position-wise feed-forward (two Linears around an activation): the oracle should say
so plainly, whatever the weights are called. `PlainFeedForward` is the paper's, for contrast."""
from torch import nn
from torch.nn import functional as F


class SwiGLUFeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1, self.w2, self.w3 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model), nn.Linear(d_model, d_ff)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class GatedFeedForward(nn.Module):
    """Named like the paper's: linear1, linear2, and a gate beside them."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1, self.gate = nn.Linear(d_model, d_ff), nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(F.gelu(self.gate(x)) * self.linear1(x))


class PackedGEGLUFeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.proj_in, self.proj_out = nn.Linear(d_model, 2 * d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        h, gate = self.proj_in(x).chunk(2, dim=-1)
        return self.proj_out(h * F.gelu(gate))


class PlainFeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1, self.w2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w2(F.relu(self.w1(x)))
