"""NumPy layers in the style of a small layer library whose layers chain through a cache: forward
keeps what backward needs in `self.store`, backward(grad) returns nothing and leaves the input's
gradient in `self.store["dx"]` and each weight's in `self.store["d<name>"]`; a block reads its
parts' stores. Each right class has a planted-bug twin (BUG)."""
import numpy as np


class _Dense:
    def __init__(self, n_in, n_out):
        self.w = np.random.uniform(-0.5, 0.5, (n_in, n_out))
        self.b = np.random.uniform(-0.5, 0.5, (1, n_out))
        self.store = {}

    def forward(self, x):
        self.store["x"] = x
        return x @ self.w + self.b

    def backward(self, grad):
        x = self.store["x"]
        self.store["dx"] = grad @ self.w.T
        self.store["dw"] = x.reshape(-1, x.shape[-1]).T @ grad.reshape(-1, grad.shape[-1])
        self.store["db"] = grad.reshape(-1, grad.shape[-1]).sum(0, keepdims=True)


class StoredGradNorm:
    def __init__(self, width, eps=1e-5):
        self.scale = np.ones((1, width))
        self.shift = np.zeros((1, width))
        self.eps = eps
        self.store = {}

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        sd = np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + self.eps)
        self.store["z"], self.store["sd"] = (x - mu) / sd, sd
        return self.store["z"] * self.scale + self.shift

    def backward(self, grad):
        z, sd = self.store["z"], self.store["sd"]
        gz = grad * self.scale
        self.store["dx"] = (gz - gz.mean(-1, keepdims=True) - z * (gz * z).mean(-1, keepdims=True)) / sd
        self.store["dscale"] = (grad * z).reshape(-1, z.shape[-1]).sum(0, keepdims=True)
        self.store["dshift"] = grad.reshape(-1, z.shape[-1]).sum(0, keepdims=True)


class StoredGradNormBUG(StoredGradNorm):
    def backward(self, grad):
        super().backward(grad)
        z, sd = self.store["z"], self.store["sd"]
        gz = grad * self.scale
        self.store["dx"] = (gz - z * (gz * z).mean(-1, keepdims=True)) / sd     # mean term lost


class StoredGradFeedForward:
    def __init__(self, width, hidden):
        self.up = _Dense(width, hidden)
        self.down = _Dense(hidden, width)
        self.store = {}

    def forward(self, x):
        h = self.up.forward(x)
        self.store["h"] = h
        return self.down.forward(np.maximum(h, 0.0))

    def backward(self, grad):
        self.down.backward(grad)
        self.up.backward(self.down.store["dx"] * (self.store["h"] > 0))
        self.store["dx"] = self.up.store["dx"]


class StoredGradFeedForwardBUG(StoredGradFeedForward):
    def backward(self, grad):
        self.down.backward(grad)
        self.up.backward(self.down.store["dx"])                 # the ReLU's gate forgotten
        self.store["dx"] = self.up.store["dx"]


class TableOnlyPositional:
    """Adds the sinusoid table; its backward gives no gradient back (returns None, keeps none)."""

    def __init__(self, longest, width):
        pos = np.arange(longest)[:, None]
        rate = 1.0 / 10000 ** ((np.arange(width) // 2 * 2) / width)
        ang = pos * rate
        self.table = np.where(np.arange(width) % 2 == 0, np.sin(ang), np.cos(ang))

    def forward(self, x):
        return x + self.table[: x.shape[-2]]

    def backward(self, grad):
        return None
