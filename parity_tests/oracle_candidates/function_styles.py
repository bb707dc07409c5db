"""Functions-style candidates: plain NumPy functions on ONE sequence, (T, d) arrays, taking their
weights as dicts of arrays spread into helpers (`linear(x, **c_fc)`), matrices kept (in, out), as
picoGPT writes GPT-2. Our own code in that style (test data for parity_tests/test_oracle_functions.py).
Right ones compute the reference's components (ReLU feed-forward, post-norm layer unless the test
sets otherwise); each wrong twin says BUG in its docstring."""
import numpy as np


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def relu(x):
    return np.maximum(x, 0.0)


def norm(x, g, b, eps: float = 1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return g * (x - mu) / np.sqrt(var + eps) + b


def dense(x, w, b):
    return x @ w + b


def dense_no_bias(x, w, b):
    """BUG: the bias it takes is never added."""
    return x @ w


def feed_forward(x, c_fc, c_proj):
    return dense(relu(dense(x, **c_fc)), **c_proj)


def feed_forward_lying_bias(x, c_fc, c_proj):
    """BUG: takes the second layer's bias and ignores it (a dict key it claims to use)."""
    return dense_no_bias(relu(dense(x, **c_fc)), **c_proj)


def attend(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def attend_wrong_axis(q, k, v, mask):
    """BUG: softmax over the queries axis."""
    s = q @ k.T / np.sqrt(q.shape[-1]) + mask
    e = np.exp(s - np.max(s, axis=0, keepdims=True))
    return (e / np.sum(e, axis=0, keepdims=True)) @ v


def attend_ignores_mask(q, k, v, mask):
    """BUG: takes a mask (so the oracle draws masks) and never applies it."""
    return softmax(q @ k.T / np.sqrt(q.shape[-1])) @ v


def _heads(x, c_attn, c_proj, n_head, attention):
    qkv = np.split(dense(x, **c_attn), 3, axis=-1)
    heads = [np.split(t, n_head, axis=-1) for t in qkv]
    causal = (1.0 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out = [attention(q, k, v, causal) for q, k, v in zip(*heads)]
    return dense(np.hstack(out), **c_proj)


def causal_mha(x, c_attn, c_proj, n_head):
    return _heads(x, c_attn, c_proj, n_head, attend)


def causal_mha_unscaled(x, c_attn, c_proj, n_head):
    """BUG: scores not divided by sqrt(d_k)."""
    return _heads(x, c_attn, c_proj, n_head, lambda q, k, v, m: softmax(q @ k.T + m) @ v)


def block(x, attn, mlp, ln_1, ln_2, n_head):
    x = norm(x + causal_mha(x, **attn, n_head=n_head), **ln_1)
    return norm(x + feed_forward(x, **mlp), **ln_2)


def block_no_ffn_residual(x, attn, mlp, ln_1, ln_2, n_head):
    """BUG: the feed-forward's residual is missing."""
    x = norm(x + causal_mha(x, **attn, n_head=n_head), **ln_1)
    return norm(feed_forward(x, **mlp), **ln_2)


def subscript_feed_forward(x, params):
    """Keys read by subscript: params["fc1"]["w"] etc."""
    h = relu(x @ params["fc1"]["w"] + params["fc1"]["b"])
    return h @ params["fc2"]["w"] + params["fc2"]["b"]
