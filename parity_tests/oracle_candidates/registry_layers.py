"""NumPy layers after a framework's layer base class (test data for
parity_tests/test_oracle_registry_layers.py): each layer keeps its weights in a private registry
dict keyed by its name and the weight's (`self._weights['ffn/fc1/W']`), its forward returns
`(out, cache)` and its backward takes back what the forward was given and returned,
`backward(x, cache, dout, gradients)`, returning the input's gradient and writing each weight's
into `gradients` under the weight's key. The twins plant one bug each in a backward."""
import numpy as np


class Layer:
    def __init__(self, name):
        self.name = name
        self._weights = {}

    def add(self, key, value):
        self._weights[f"{self.name}/{key}"] = value

    def get(self, key):
        return self._weights[f"{self.name}/{key}"]


class RegistryLayerNorm(Layer):
    GAIN_IN_DX = True

    def __init__(self, d_model, eps=1e-5, name="norm"):
        super().__init__(name)
        self.eps = eps
        self.add("gain", np.ones(d_model))
        self.add("shift", np.zeros(d_model))

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        inv = 1.0 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + self.eps)
        xhat = (x - mu) * inv
        return xhat * self.get("gain") + self.get("shift"), {"xhat": xhat, "inv": inv}

    def backward(self, x, cache, dout, gradients):
        xhat, inv = cache["xhat"], cache["inv"]
        axes = tuple(range(dout.ndim - 1))
        gradients[f"{self.name}/gain"] = (dout * xhat).sum(axes)
        gradients[f"{self.name}/shift"] = dout.sum(axes)
        # dL/dx = inv * (g - mean(g) - xhat * mean(g * xhat)), g = dout * gain
        g = dout * self.get("gain") if self.GAIN_IN_DX else dout
        return inv * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))


class RegistryLayerNormGainLost(RegistryLayerNorm):
    """BUG: the input's gradient leaves the gain out."""

    GAIN_IN_DX = False


class Dense(Layer):
    def __init__(self, d_in, d_out, name, rng):
        super().__init__(name)
        self.add("W", rng.standard_normal((d_in, d_out)) * 0.3)     # (in, out): y = x @ W + b
        self.add("b", np.zeros(d_out))

    def forward(self, x):
        return x @ self.get("W") + self.get("b"), None

    def backward(self, x, cache, dout, gradients):
        flat_x, flat_d = x.reshape(-1, x.shape[-1]), dout.reshape(-1, dout.shape[-1])
        gradients[f"{self.name}/W"] = flat_x.T @ flat_d
        gradients[f"{self.name}/b"] = flat_d.sum(0)
        return dout @ self.get("W").T


class RegistryFeedForward(Layer):
    RELU_MASK = True

    def __init__(self, d_model, d_ff, name="ffn"):
        super().__init__(name)
        rng = np.random.default_rng(0)
        self.fc1 = Dense(d_model, d_ff, f"{name}/fc1", rng)
        self.fc2 = Dense(d_ff, d_model, f"{name}/fc2", rng)

    def forward(self, x):
        h, _ = self.fc1.forward(x)
        a = np.maximum(h, 0)
        y, _ = self.fc2.forward(a)
        return y, {"h": h, "a": a}

    def backward(self, x, cache, dout, gradients):
        da = self.fc2.backward(cache["a"], None, dout, gradients)
        dh = da * (cache["h"] > 0) if self.RELU_MASK else da
        return self.fc1.backward(x, None, dh, gradients)


class RegistryFeedForwardNoReluMask(RegistryFeedForward):
    """BUG: the backward passes the gradient through the ReLU where it was off."""

    RELU_MASK = False
