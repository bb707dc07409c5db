"""Constructor flags taken and ignored: a multi-head attention whose constructor takes `causal` and
`bias` (as many course skeletons do) and is never causal, always with biases. Right at the
defaults the oracle leaves them at; wrong at every other value. The oracle cannot know what an
unknown flag means, so the report must name each one it left at its default."""
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, causal=False, bias=True):
        super().__init__()
        self.causal, self.bias = causal, bias                        # declared, never read
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        B, Tq, D = Q.shape
        q = self.W_q(Q).view(B, Tq, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(K).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(V).view(B, -1, self.h, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.W_o((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, Tq, D))
