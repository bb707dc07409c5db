"""Torch layers whose forward takes its inputs under the attention's role names, as a widely read
tutorial writes them: `Block.forward(value, key, query, mask)` (an encoder layer: all three are
x) and `CrossBlock.forward(x, value, key, src_mask, trg_mask)` (a decoder layer: key and value are
the encoder memory). Test data for parity_tests/test_oracle_role_named_layer_inputs.py; each BUG
twin differs in one line."""
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, embed_size, heads):
        super().__init__()
        self.heads, self.width = heads, embed_size // heads
        self.values = nn.Linear(embed_size, embed_size)
        self.keys = nn.Linear(embed_size, embed_size)
        self.queries = nn.Linear(embed_size, embed_size)
        self.fc_out = nn.Linear(embed_size, embed_size)

    def forward(self, values, keys, query, mask):
        n = query.shape[0]

        def split(t):
            return t.reshape(n, t.shape[1], self.heads, self.width)

        v, k, q = split(self.values(values)), split(self.keys(keys)), split(self.queries(query))
        energy = torch.einsum("nqhd,nkhd->nhqk", q, k) / self.width ** 0.5
        if mask is not None:
            energy = energy.masked_fill(mask == 0, float("-1e20"))
        att = torch.softmax(energy, dim=3)
        out = torch.einsum("nhql,nlhd->nqhd", att, v).reshape(n, query.shape[1], -1)
        return self.fc_out(out)


class Block(nn.Module):
    def __init__(self, embed_size, heads, dropout, d_ff):
        super().__init__()
        self.attention = Attention(embed_size, heads)
        self.norm1, self.norm2 = nn.LayerNorm(embed_size), nn.LayerNorm(embed_size)
        self.feed_forward = nn.Sequential(nn.Linear(embed_size, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, embed_size))
        self.dropout = nn.Dropout(dropout)

    def forward(self, value, key, query, mask):
        x = self.dropout(self.norm1(self.attention(value, key, query, mask) + query))
        return self.dropout(self.norm2(self.feed_forward(x) + self._residual(x)))

    def _residual(self, x):
        return x


class BlockNoResidual(Block):
    """BUG: the feed-forward sublayer has no residual."""

    def _residual(self, x):
        return torch.zeros_like(x)


class CrossBlock(nn.Module):
    def __init__(self, embed_size, heads, d_ff, dropout):
        super().__init__()
        self.self_attention = Attention(embed_size, heads)
        self.cross_attention = Attention(embed_size, heads)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(embed_size) for _ in range(3))
        self.feed_forward = nn.Sequential(nn.Linear(embed_size, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, embed_size))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, value, key, src_mask, trg_mask):
        q = self.dropout(self.norm1(self.self_attention(x, x, x, trg_mask) + x))
        q = self.dropout(self.norm2(self.cross_attention(value, self._key(key, q), q, src_mask) + q))
        return self.dropout(self.norm3(self.feed_forward(q) + q))

    def _key(self, key, q):
        return key


class CrossBlockOwnKeys(CrossBlock):
    """BUG: the cross-attention's keys are the decoder's own positions, not the memory."""

    def _key(self, key, q):
        return q
