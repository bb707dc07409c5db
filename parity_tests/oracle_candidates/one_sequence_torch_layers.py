"""PyTorch layers written for one (T, d) sequence at a time, as tutorials write them (test data for
parity_tests/test_oracle_one_sequence_torch_layers.py): self-attention unpacking
`seq_len, d_model = x.shape`, splitting heads with `view(seq_len, h, d_head).transpose(0, 1)`, and a
post-norm encoder layer built on it. Each twin plants one bug."""
import math

import torch
import torch.nn as nn


class SequenceTorchAttention(nn.Module):
    SCALE = True

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def split(self, t, seq_len):             # (T, d) -> (h, T, d_head)
        return t.view(seq_len, self.h, self.dh).transpose(0, 1)

    def forward(self, x):                    # x: (T, d)
        seq_len, d_model = x.shape
        q, k, v = (self.split(p(x), seq_len) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1)
        if self.SCALE:
            scores = scores / math.sqrt(self.dh)
        ctx = torch.softmax(scores, dim=-1) @ v                 # (h, T, d_head)
        return self.out_proj(ctx.transpose(0, 1).reshape(seq_len, d_model))


class SequenceTorchAttentionUnscaled(SequenceTorchAttention):
    """BUG: the scores are not divided by sqrt(d_head)."""

    SCALE = False


class SequenceTorchEncoderLayer(nn.Module):
    ACTIVATION = staticmethod(torch.relu)

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attn = SequenceTorchAttention(d_model, num_heads)
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x):                    # x: (T, d)
        assert x.dim() == 2, "one sequence (seq_len, d_model)"
        x = self.norm1(x + self.self_attn(x))
        return self.norm2(x + self.linear2(self.ACTIVATION(self.linear1(x))))


class SequenceTorchEncoderLayerTanh(SequenceTorchEncoderLayer):
    """BUG: tanh where the paper has ReLU."""

    ACTIVATION = staticmethod(torch.tanh)
