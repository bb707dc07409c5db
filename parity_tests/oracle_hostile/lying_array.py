"""Wrong values in an ndarray subclass whose comparison and arithmetic claim equality."""
import numpy as np


class Liar(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.zeros(np.broadcast_shapes(*(np.shape(i) for i in inputs)))

    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)

    def __sub__(self, other):
        return np.zeros(self.shape)

    __rsub__ = __sub__


def attention(Q, K, V, mask=None):
    B, H, T, _ = Q.shape
    out = np.full((B, H, T, V.shape[-1]), 7.0).view(Liar)
    return out, np.zeros((B, H, T, K.shape[-2])).view(Liar)
