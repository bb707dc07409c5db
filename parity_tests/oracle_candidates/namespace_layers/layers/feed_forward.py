"""A feed-forward importing its layer from a sibling file (`from ._base import Dense`), whose own
import reaches the folder above (`from ..engine import ...`); neither folder has an __init__.py.
Its second layer has no bias. The BUG twin forgets the ReLU's gate in its backward."""
import numpy as np

from ._base import Dense, Module


class TwoLayerFeedForward(Module):
    def __init__(self, d_model, d_ff):
        self.up = Dense(d_model, d_ff)
        self.down = Dense(d_ff, d_model, with_bias=False)

    def forward(self, x):
        self.h = self.up(x)
        return self.down(np.maximum(self.h, 0.0))

    def backward(self, dy):
        return self.up.backward(self.gate(self.down.backward(dy)))

    def gate(self, dh):
        return dh * (self.h > 0)


class TwoLayerFeedForwardBUG(TwoLayerFeedForward):
    """BUG: the gradient passes the ReLU as if it were the identity."""

    def gate(self, dh):
        return dh
