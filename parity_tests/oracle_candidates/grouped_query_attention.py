"""A NumPy grouped-query attention (forward only), `Attention(embed_dim, query_heads, kv_heads)`,
key/value heads repeated over their group of query heads; with as many key/value heads as query
heads it is multi-head attention. The right class has a planted-bug twin (BUG)."""
import numpy as np


class GroupedQueryAttention:
    def __init__(self, embed_dim, query_heads, kv_heads):
        self.hq, self.hkv, self.hd = query_heads, kv_heads, embed_dim // query_heads
        self.Wq = np.random.randn(embed_dim, embed_dim) * 0.3
        self.Wk = np.random.randn(embed_dim, kv_heads * self.hd) * 0.3
        self.Wv = np.random.randn(embed_dim, kv_heads * self.hd) * 0.3
        self.Wo = np.random.randn(embed_dim, embed_dim) * 0.3

    def split(self, t, n):
        return t.reshape(t.shape[0], t.shape[1], n, self.hd).transpose(0, 2, 1, 3)

    def forward(self, x, mask=None):
        q = self.split(x @ self.Wq, self.hq)
        k = np.repeat(self.split(x @ self.Wk, self.hkv), self.hq // self.hkv, axis=1)
        v = np.repeat(self.split(x @ self.Wv, self.hkv), self.hq // self.hkv, axis=1)
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.hd)
        if mask is not None:
            s = np.where(mask, s, -1e30)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        return (a @ v).transpose(0, 2, 1, 3).reshape(x.shape) @ self.Wo


class GroupedQueryAttentionBUG(GroupedQueryAttention):
    def split(self, t, n):
        return t.reshape(t.shape[0], n, t.shape[1], self.hd)           # heads split off the wrong axis
