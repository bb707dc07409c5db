"""A NumPy decoder layer whose two attentions keep their projections at the layer's own level,
numbered in the paper's order: `W_q1` ... `W_o1` for the masked self-attention, `W_q2` ... `W_o2`
for the cross-attention, biases `b_q1` ... (test data for
parity_tests/test_oracle_numbered_decoder_projections.py). The twin takes the cross-attention's
keys and values from the decoder's own input instead of the memory."""
import numpy as np


def _norm(x, gain, shift, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * gain + shift


class Norm:
    def __init__(self, d_model):
        self.gamma, self.beta = np.ones(d_model), np.zeros(d_model)


class NumberedDecoderLayer:
    CROSS_FROM_MEMORY = True

    def __init__(self, d_model, num_heads, d_ff):
        rng = np.random.default_rng(5)
        self.h, self.dh = num_heads, d_model // num_heads
        for i in "12":
            for n in "qkvo":
                setattr(self, f"W_{n}{i}", rng.standard_normal((d_model, d_model)) * 0.3)   # (out, in)
                setattr(self, f"b_{n}{i}", rng.standard_normal(d_model) * 0.1)
        self.W_ff1, self.b_ff1 = rng.standard_normal((d_ff, d_model)) * 0.3, np.zeros(d_ff)
        self.W_ff2, self.b_ff2 = rng.standard_normal((d_model, d_ff)) * 0.3, np.zeros(d_model)
        self.norm1, self.norm2, self.norm3 = Norm(d_model), Norm(d_model), Norm(d_model)

    def _attend(self, i, x, kv, mask):       # (B, T, d), (B, S, d), mask (B, 1, T, S) True = keep
        b, t, d = x.shape
        lin = lambda z, n: z @ getattr(self, f"W_{n}{i}").T + getattr(self, f"b_{n}{i}")  # noqa: E731
        split = lambda z: z.reshape(b, -1, self.h, self.dh).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = split(lin(x, "q")), split(lin(kv, "k")), split(lin(kv, "v"))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dh)
        if mask is not None:
            s = np.where(mask, s, -1e9)
        e = np.exp(s - s.max(-1, keepdims=True))
        ctx = (e / e.sum(-1, keepdims=True) @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
        return lin(ctx, "o")

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        n1, n2, n3 = self.norm1, self.norm2, self.norm3
        x = _norm(x + self._attend("1", x, x, self_mask), n1.gamma, n1.beta)
        kv = memory if self.CROSS_FROM_MEMORY else x
        x = _norm(x + self._attend("2", x, kv, memory_mask), n2.gamma, n2.beta)
        h = np.maximum(x @ self.W_ff1.T + self.b_ff1, 0)
        return _norm(x + h @ self.W_ff2.T + self.b_ff2, n3.gamma, n3.beta)


class NumberedDecoderLayerSelfKeys(NumberedDecoderLayer):
    """BUG: the cross-attention's keys and values come from the decoder's input, not the memory."""

    CROSS_FROM_MEMORY = False
