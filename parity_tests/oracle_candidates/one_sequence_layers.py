"""NumPy layers written for one (T, d) sequence at a time, as learners write them (test data for
parity_tests/test_oracle_one_sequence_layers.py): self-attention with a backward, `q @ k.T` on 2-D
arrays, weights (out, in); and a forward-only post-norm encoder layer whose square matrices are used
as `x @ W`. Each twin plants one bug."""
import numpy as np


class SequenceSelfAttention:
    KEY_SCALE = True

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(2)
        self.h, self.dh = num_heads, d_model // num_heads
        for n in "qkvo":
            setattr(self, f"W{n}", rng.standard_normal((d_model, d_model)) * 0.3)
            setattr(self, f"b{n}", np.zeros(d_model))

    def forward(self, x):                    # x: (T, d)
        heads = []
        self.saved = {"x": x}
        for i in range(self.h):
            s = slice(i * self.dh, (i + 1) * self.dh)
            q, k, v = (x @ getattr(self, f"W{n}")[s].T + getattr(self, f"b{n}")[s] for n in "qkv")
            e = np.exp(q @ k.T / np.sqrt(self.dh) - (q @ k.T / np.sqrt(self.dh)).max(-1, keepdims=True))
            p = e / e.sum(-1, keepdims=True)
            self.saved[i] = (q, k, v, p)
            heads.append(p @ v)
        self.saved["ctx"] = np.concatenate(heads, -1)
        return self.saved["ctx"] @ self.Wo.T + self.bo

    def backward(self, dy):                  # dy: (T, d)
        x, ctx = self.saved["x"], self.saved["ctx"]
        self.dWo, self.dbo = dy.T @ ctx, dy.sum(0)
        dctx = dy @ self.Wo
        for n in "qkv":
            setattr(self, f"dW{n}", np.zeros_like(self.Wq))
            setattr(self, f"db{n}", np.zeros_like(self.bq))
        dx = np.zeros_like(x)
        for i in range(self.h):
            s = slice(i * self.dh, (i + 1) * self.dh)
            q, k, v, p = self.saved[i]
            dp, dv = dctx[:, s] @ v.T, p.T @ dctx[:, s]
            ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / np.sqrt(self.dh)
            dq, dk = ds @ k, ds.T @ q * (1.0 if self.KEY_SCALE else np.sqrt(self.dh))
            for n, g in (("q", dq), ("k", dk), ("v", dv)):
                getattr(self, f"dW{n}")[s] = g.T @ x
                getattr(self, f"db{n}")[s] = g.sum(0)
                dx += g @ getattr(self, f"W{n}")[s]
        return dx


class SequenceSelfAttentionKeyUnscaled(SequenceSelfAttention):
    """BUG: the key's gradient misses the 1/sqrt(d_head) scale."""

    KEY_SCALE = False


class Norm:
    def __init__(self, d_model, eps=1e-5):
        self.gamma, self.beta, self.eps = np.ones(d_model), np.zeros(d_model), eps

    def __call__(self, x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + self.eps) * self.gamma \
            + self.beta


class SequenceAttentionXW:
    def __init__(self, d_model, num_heads, rng):
        self.h, self.dh = num_heads, d_model // num_heads
        self.Wq, self.Wk, self.Wv, self.Wo = (rng.standard_normal((d_model, d_model)) * 0.3
                                              for _ in range(4))          # x @ W, (in, out)

    def __call__(self, x):                   # x: (T, d)
        q, k, v = x @ self.Wq, x @ self.Wk, x @ self.Wv
        heads = []
        for i in range(self.h):
            s = slice(i * self.dh, (i + 1) * self.dh)
            a = q[:, s] @ k[:, s].T / np.sqrt(self.dh)
            e = np.exp(a - a.max(-1, keepdims=True))
            heads.append(e / e.sum(-1, keepdims=True) @ v[:, s])
        return np.concatenate(heads, -1) @ self.Wo


class SequenceEncoderLayer:
    RELU = True

    def __init__(self, d_model, num_heads, d_ff):
        rng = np.random.default_rng(3)
        self.attn = SequenceAttentionXW(d_model, num_heads, rng)
        self.W1, self.b1 = rng.standard_normal((d_model, d_ff)) * 0.3, np.zeros(d_ff)
        self.W2, self.b2 = rng.standard_normal((d_ff, d_model)) * 0.3, np.zeros(d_model)
        self.norm1, self.norm2 = Norm(d_model), Norm(d_model)

    def forward(self, x):                    # x: (T, d), post-norm
        x = self.norm1(x + self.attn(x))
        h = x @ self.W1 + self.b1
        return self.norm2(x + (np.maximum(h, 0) if self.RELU else h) @ self.W2 + self.b2)


class SequenceEncoderLayerNoRelu(SequenceEncoderLayer):
    """BUG: the feed-forward has no activation."""

    RELU = False


class SequenceCausalAttention:
    """One-sequence self-attention that masks the future itself (no mask argument)."""

    DIAGONAL = 1

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(4)
        self.attn = SequenceAttentionXW(d_model, num_heads, rng)

    def forward(self, x):                    # x: (T, d)
        a = self.attn
        q, k, v = x @ a.Wq, x @ a.Wk, x @ a.Wv
        hidden = np.triu(np.ones((len(x), len(x)), dtype=bool), k=self.DIAGONAL)
        heads = []
        for i in range(a.h):
            s = slice(i * a.dh, (i + 1) * a.dh)
            sc = np.where(hidden, -1e9, q[:, s] @ k[:, s].T / np.sqrt(a.dh))
            e = np.exp(sc - sc.max(-1, keepdims=True))
            heads.append(e / e.sum(-1, keepdims=True) @ v[:, s])
        return np.concatenate(heads, -1) @ a.Wo


class SequenceCausalAttentionHidesItself(SequenceCausalAttention):
    """BUG: the causal mask also hides each query's own position (a row of nothing but -1e9 at
    the first query)."""

    DIAGONAL = 0
