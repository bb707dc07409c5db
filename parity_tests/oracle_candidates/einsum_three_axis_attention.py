"""NumPy scaled dot-product attention spelt with three-axis einsums, as small libraries write it
for (batch, T, d) inputs (test data for parity_tests/test_oracle_einsum_three_axis.py): it returns
(output, weights), hides keys where the mask is 0, and raises on (batch, heads, T, d) inputs. The
twin forgets the 1/sqrt(d_k) scale."""
import numpy as np


def _weights(q, k, mask, scale):
    s = np.einsum("bqd,bkd->bqk", q, k) * scale
    if mask is not None:
        s = np.where(mask.astype(bool), s, -1e9)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def einsum_attention(query, key, value, mask=None):
    attn = _weights(query, key, mask, 1.0 / np.sqrt(query.shape[-1]))
    return np.einsum("bqk,bkd->bqd", attn, value), attn


def einsum_attention_unscaled(query, key, value, mask=None):
    """BUG: the scores are not scaled by 1/sqrt(d_k)."""
    attn = _weights(query, key, mask, 1.0)
    return np.einsum("bqk,bkd->bqd", attn, value), attn
