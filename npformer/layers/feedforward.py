"""Position-wise feed-forward network, the same weights at every position:

    FFN(x) = max(0, x W1 + b1) W2 + b2                                (Vaswani et al. 2017, eq. 2)

here linear2(dropout(activation(linear1(x)))): activation "relu" (the paper), "gelu" or "gelu_tanh",
and the config's `activation_dropout` after it (where torch.nn.TransformerEncoderLayer puts one).
"""
import numpy as np

from npformer.layers.activations import Activation
from npformer.layers.dropout import Dropout
from npformer.layers.linear import Linear
from npformer.layers.module import Module


class PositionwiseFeedForward(Module):
    """linear1 (D -> F), activation, dropout, linear2 (F -> D): forward(x (B, T, D)) -> (B, T, D)."""

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", dropout: float = 0.0,
                 bias: bool = True, dtype="float32", rng: np.random.Generator | None = None):
        super().__init__()
        self.d_model = d_model
        self.dtype = np.dtype(dtype)
        self.linear1 = Linear(d_model, d_ff, bias=bias, dtype=dtype, rng=rng)
        self.activation = Activation(activation)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(d_ff, d_model, bias=bias, dtype=dtype, rng=rng)

    def forward(self, x: np.ndarray) -> np.ndarray:
        h = self.linear1.forward(x)         # (B, T, F)  x W1^T + b1
        a = self.activation.forward(h)      # (B, T, F)  act(h)
        a = self.dropout.forward(a)         # (B, T, F)  a * M / (1 - p) in training
        out = self.linear2.forward(a)       # (B, T, D)  a W2^T + b2
        self._cache = (out,)                # the children hold their own caches
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        self._require_cache()
        da = self.linear2.backward(dout)    # (B, T, F)  dout W2; accumulates dW2, db2
        da = self.dropout.backward(da)      # (B, T, F)  da * M / (1 - p)
        dh = self.activation.backward(da)   # (B, T, F)  da * act'(h)
        return self.linear1.backward(dh)    # (B, T, D)  dh W1; accumulates dW1, db1
