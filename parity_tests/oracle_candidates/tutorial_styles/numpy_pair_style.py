"""CS231n-style NumPy multi-head attention as a forward/backward function pair, weights (in, out)
used as x @ W, no biases: mha_forward(...) -> (out, cache), mha_backward(dout, cache) -> grads.
Written for the oracle's reach tests. Correct unless a docstring says BUG."""
import numpy as np


def _split(x, h):
    B, T, D = x.shape
    return x.reshape(B, T, h, D // h).transpose(0, 2, 1, 3)            # (B, h, T, dk)


def _merge(x):
    B, h, T, dk = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * dk)                # (B, T, D)


def mha_forward(query, key, value, Wq, Wk, Wv, Wo, num_heads, mask=None):
    Q, K, V = _split(query @ Wq, num_heads), _split(key @ Wk, num_heads), _split(value @ Wv, num_heads)
    dk = Q.shape[-1]
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(dk)                       # (B, h, Tq, Tk)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    A = np.exp(s)
    A /= A.sum(-1, keepdims=True)                                       # (B, h, Tq, Tk)
    Z = _merge(A @ V)                                                   # (B, Tq, D)
    out = Z @ Wo
    return out, (query, key, value, Wq, Wk, Wv, Wo, Q, K, V, A, Z)


def mha_backward(dout, cache):
    query, key, value, Wq, Wk, Wv, Wo, Q, K, V, A, Z = cache
    h, dk = Q.shape[1], Q.shape[-1]
    D = Z.shape[-1]
    dWo = Z.reshape(-1, D).T @ dout.reshape(-1, D)                      # (D, D)
    dZ = _split(dout @ Wo.T, h)                                         # (B, h, Tq, dk)
    dA = dZ @ V.transpose(0, 1, 3, 2)
    dV = A.transpose(0, 1, 3, 2) @ dZ
    ds = A * (dA - (dA * A).sum(-1, keepdims=True)) / np.sqrt(dk)
    dQ, dK = ds @ K, ds.transpose(0, 1, 3, 2) @ Q
    dQ, dK, dV = _merge(dQ), _merge(dK), _merge(dV)
    dWq = query.reshape(-1, D).T @ dQ.reshape(-1, D)
    dWk = key.reshape(-1, D).T @ dK.reshape(-1, D)
    dWv = value.reshape(-1, D).T @ dV.reshape(-1, D)
    return dQ @ Wq.T, dK @ Wk.T, dV @ Wv.T, dWq, dWk, dWv, dWo


def mha_bad_forward(query, key, value, Wq, Wk, Wv, Wo, num_heads, mask=None):
    return mha_forward(query, key, value, Wq, Wk, Wv, Wo, num_heads, mask)


def mha_bad_backward(dout, cache):
    """BUG: dWo from the wrong side (dout^T Z instead of Z^T dout)."""
    grads = list(mha_backward(dout, cache))
    grads[6] = grads[6].T
    return tuple(grads)
