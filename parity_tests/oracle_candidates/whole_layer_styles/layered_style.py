"""Layers in the style of from-scratch tutorial repositories: a ScaleDotProductAttention module
returning (out, score), a LayerNorm with gamma/beta, PositionwiseFeedForward(d_model, hidden,
drop_prob), EncoderLayer(d_model, ffn_hidden, n_head, drop_prob) and a DecoderLayer whose forward is
(dec, enc, trg_mask, src_mask). Written for the oracle's reach tests; correct unless a docstring
says BUG."""
import math

import torch
from torch import nn


class ScaleDotProductAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, q, k, v, mask=None):
        d_tensor = k.size(-1)
        score = q @ k.transpose(-2, -1) / math.sqrt(d_tensor)    # (B, H, Tq, Tk)
        if mask is not None:
            score = score.masked_fill(mask == 0, -10000.0)
        score = self.softmax(score)
        return score @ v, score


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        self.n_head = n_head
        self.attention = ScaleDotProductAttention()
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_concat = nn.Linear(d_model, d_model)

    def split(self, t):
        b, n, d = t.size()
        return t.view(b, n, self.n_head, d // self.n_head).transpose(1, 2)

    def concat(self, t):
        b, h, n, dh = t.size()
        return t.transpose(1, 2).contiguous().view(b, n, h * dh)

    def forward(self, q, k, v, mask=None):
        q, k, v = self.split(self.w_q(q)), self.split(self.w_k(k)), self.split(self.w_v(v))
        out, _ = self.attention(q, k, v, mask=mask)
        return self.w_concat(self.concat(out))


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-12):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, unbiased=False, keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, hidden, drop_prob=0.1):
        super().__init__()
        self.linear1 = nn.Linear(d_model, hidden)
        self.linear2 = nn.Linear(hidden, d_model)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(p=drop_prob)

    def forward(self, x):
        return self.linear2(self.dropout(self.relu(self.linear1(x))))


class EncoderLayer(nn.Module):
    def __init__(self, d_model, ffn_hidden, n_head, drop_prob):
        super().__init__()
        self.attention = MultiHeadAttention(d_model, n_head)
        self.norm1 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(p=drop_prob)
        self.ffn = PositionwiseFeedForward(d_model, ffn_hidden, drop_prob)
        self.norm2 = LayerNorm(d_model)
        self.dropout2 = nn.Dropout(p=drop_prob)

    def forward(self, x, src_mask):
        _x = x
        x = self.norm1(self.dropout1(self.attention(q=x, k=x, v=x, mask=src_mask)) + _x)
        _x = x
        return self.norm2(self.dropout2(self.ffn(x)) + _x)


class EncoderLayerNoResidual(EncoderLayer):
    """BUG: the feed-forward sublayer has no residual connection."""

    def forward(self, x, src_mask):
        x = self.norm1(self.attention(q=x, k=x, v=x, mask=src_mask) + x)
        return self.norm2(self.ffn(x))


class DecoderLayer(nn.Module):
    def __init__(self, d_model, ffn_hidden, n_head, drop_prob):
        super().__init__()
        self.self_attention = MultiHeadAttention(d_model, n_head)
        self.norm1 = LayerNorm(d_model)
        self.dropout1 = nn.Dropout(p=drop_prob)
        self.enc_dec_attention = MultiHeadAttention(d_model, n_head)
        self.norm2 = LayerNorm(d_model)
        self.dropout2 = nn.Dropout(p=drop_prob)
        self.ffn = PositionwiseFeedForward(d_model, ffn_hidden, drop_prob)
        self.norm3 = LayerNorm(d_model)
        self.dropout3 = nn.Dropout(p=drop_prob)

    def cross(self, x, enc, src_mask):
        return self.enc_dec_attention(q=x, k=enc, v=enc, mask=src_mask)

    def forward(self, dec, enc, trg_mask, src_mask):
        x = self.norm1(self.dropout1(self.self_attention(q=dec, k=dec, v=dec, mask=trg_mask)) + dec)
        if enc is not None:
            x = self.norm2(self.dropout2(self.cross(x, enc, src_mask)) + x)
        return self.norm3(self.dropout3(self.ffn(x)) + x)


class DecoderLayerStaleResidual(DecoderLayer):
    """BUG: the cross-attention's residual adds the layer's input `dec`, not the sublayer's input."""

    def forward(self, dec, enc, trg_mask, src_mask):
        x = self.norm1(self.self_attention(q=dec, k=dec, v=dec, mask=trg_mask) + dec)
        x = self.norm2(self.cross(x, enc, src_mask) + dec)
        return self.norm3(self.ffn(x) + x)


class HiddenFirstFeedForward(nn.Module):
    """FeedForward(hid_dim, d_model): here hid_dim is the hidden width (a name with two meanings)."""

    def __init__(self, hid_dim, d_model):
        super().__init__()
        self.fc_1 = nn.Linear(d_model, hid_dim)
        self.fc_2 = nn.Linear(hid_dim, d_model)

    def forward(self, x):
        return self.fc_2(torch.relu(self.fc_1(x)))
