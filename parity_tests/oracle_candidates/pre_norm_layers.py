"""PyTorch encoder and decoder layers that normalise before each sublayer (pre-norm, x + f(LN(x)))
with no `norm_first` argument to say so, ReLU feed-forward, the masks optional. Written for the
oracle's tests. Correct unless a docstring says BUG."""
import torch
from torch import nn


class Attention(nn.Module):
    power = 0.5

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def split(self, t):
        b, n, d = t.shape
        return t.view(b, n, self.h, d // self.h).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.split(self.q_proj(query)), self.split(self.k_proj(key)), self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / (q.shape[-1] ** self.power)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        heads = torch.softmax(scores, dim=-1) @ v
        b, _, n, _ = heads.shape
        return self.out_proj(heads.transpose(1, 2).reshape(b, n, -1))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class PreNormEncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps=1e-5):
        super().__init__()
        self.self_attn = Attention(d_model, num_heads)
        self.feed_forward = FeedForward(d_model, d_ff)
        self.norm1, self.norm2 = nn.LayerNorm(d_model, eps=eps), nn.LayerNorm(d_model, eps=eps)

    def forward(self, x, mask=None):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask)
        return x + self.feed_forward(self.norm2(x))


class PreNormEncoderLayer_BUG(PreNormEncoderLayer):
    """BUG: the feed-forward's residual adds the normalised input instead of the input."""

    def forward(self, x, mask=None):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask)
        n = self.norm2(x)
        return n + self.feed_forward(n)


class WholeWidthAttention(Attention):
    power = 1.0


class PreNormEncoderLayerScale_BUG(PreNormEncoderLayer):
    """BUG: attention scores divided by the head width instead of its square root."""

    def __init__(self, d_model, num_heads, d_ff, eps=1e-5):
        super().__init__(d_model, num_heads, d_ff, eps)
        self.self_attn = WholeWidthAttention(d_model, num_heads)


class PreNormDecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps=1e-5):
        super().__init__()
        self.self_attn, self.cross_attn = Attention(d_model, num_heads), Attention(d_model, num_heads)
        self.feed_forward = FeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model, eps=eps) for _ in range(3))

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, self_mask)
        x = x + self.cross_attn(self.norm2(x), memory, memory, memory_mask)
        return x + self.feed_forward(self.norm3(x))


class PreNormBlockFixedWidth(PreNormEncoderLayer):
    """The feed-forward's width fixed by the code at 4 * d_model, as nanoGPT-style blocks do (no d_ff
    argument): the norm order is probed at that width."""

    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads, 4 * d_model)
