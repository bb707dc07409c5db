"""NumPy parts that train themselves: each dense layer keeps its weight as `params`, its bias as
`bias_params`, accumulated gradients (`params_delta`, `bias_delta`) and optimizer state of the
weight's shape (Adam's `moment_p` / `rmsprop_p`, or one `velocity`) that only `update` reads.
The state is no parameter: the forward never reads it. Twins whose docstring says BUG have one
planted mistake; `NumpyGLUFeedForward` is a real gate, for contrast."""
from __future__ import annotations

import numpy as np


class Dense:
    def __init__(self, n_in, n_out):
        self.params = np.random.uniform(-0.1, 0.1, (n_in, n_out))
        self.bias_params = np.zeros(n_out)
        self.params_delta = np.zeros((n_in, n_out))
        self.bias_delta = np.zeros(n_out)
        self.moment_p = np.zeros((n_in, n_out))
        self.rmsprop_p = np.zeros((n_in, n_out))
        self.step = 1

    def forward(self, x):
        return x @ self.params + self.bias_params

    def update(self, lr=1e-3, b1=0.9, b2=0.999):
        self.moment_p = b1 * self.moment_p + (1 - b1) * self.params_delta
        self.rmsprop_p = b2 * self.rmsprop_p + (1 - b2) * self.params_delta ** 2
        m = self.moment_p / (1 - b1 ** self.step)
        v = self.rmsprop_p / (1 - b2 ** self.step)
        self.params -= lr * m / (np.sqrt(v) + 1e-8)
        self.bias_params -= lr * self.bias_delta
        self.step += 1


class MomentumDense:
    def __init__(self, n_in, n_out):
        self.weights = np.random.randn(n_in, n_out) * 0.1
        self.biases = np.zeros(n_out)
        self.velocity = np.zeros((n_in, n_out))
        self.grad_w = np.zeros((n_in, n_out))

    def __call__(self, x):
        return np.dot(x, self.weights) + self.biases

    def sgd(self, lr=0.01, mu=0.9):
        self.velocity = mu * self.velocity - lr * self.grad_w
        self.weights += self.velocity


class Norm:
    def __init__(self, d):
        self.gamma, self.beta = np.ones(d), np.zeros(d)

    def forward(self, x):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * self.gamma + self.beta


class MomentumFeedForward:
    def __init__(self, d_model, d_ff):
        self.up, self.down = MomentumDense(d_model, d_ff), MomentumDense(d_ff, d_model)

    def forward(self, x):
        return self.down(np.maximum(self.up(x), 0.0))


class MomentumFeedForwardBUG(MomentumFeedForward):
    """BUG: the hidden activation is a leaky ReLU."""

    def forward(self, x):
        h = self.up(x)
        return self.down(np.where(h > 0, h, 0.1 * h))


class NumpyGLUFeedForward:
    """A gate: w2(relu(x @ w1) * (x @ w3)), every matrix read by the forward."""

    def __init__(self, d_model, d_ff):
        self.w1 = np.random.randn(d_model, d_ff) * 0.1
        self.w3 = np.random.randn(d_model, d_ff) * 0.1
        self.w2 = np.random.randn(d_ff, d_model) * 0.1

    def forward(self, x):
        return (np.maximum(x @ self.w1, 0.0) * (x @ self.w3)) @ self.w2


class AdamStateEncoderLayer:
    """Post-norm; the attention's dense layers sit at the layer's own level (q, k, v, o)."""

    def __init__(self, d_model, num_heads, d_ff):
        self.h = num_heads
        self.q, self.k, self.v, self.o = (Dense(d_model, d_model) for _ in range(4))
        self.fc0, self.fc1 = Dense(d_model, d_ff), Dense(d_ff, d_model)
        self.norm1, self.norm2 = Norm(d_model), Norm(d_model)

    def attend(self, x):
        B, T, D = x.shape
        split = lambda t: t.reshape(B, T, self.h, D // self.h).transpose(0, 2, 1, 3)  # noqa: E731
        Q, K, V = split(self.q.forward(x)), split(self.k.forward(x)), split(self.v.forward(x))
        s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(D // self.h)
        a = np.exp(s - s.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        return self.o.forward((a @ V).transpose(0, 2, 1, 3).reshape(B, T, D))

    def forward(self, x):
        x = self.norm1.forward(x + self.attend(x))
        return self.norm2.forward(x + self.fc1.forward(np.maximum(self.fc0.forward(x), 0.0)))


class AdamStateEncoderLayerBUG(AdamStateEncoderLayer):
    """BUG: the scores are scaled by 1/d_model, not 1/sqrt(d_head)."""

    def attend(self, x):
        B, T, D = x.shape
        split = lambda t: t.reshape(B, T, self.h, D // self.h).transpose(0, 2, 1, 3)  # noqa: E731
        Q, K, V = split(self.q.forward(x)), split(self.k.forward(x)), split(self.v.forward(x))
        s = Q @ K.transpose(0, 1, 3, 2) / D
        a = np.exp(s - s.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        return self.o.forward((a @ V).transpose(0, 2, 1, 3).reshape(B, T, D))
