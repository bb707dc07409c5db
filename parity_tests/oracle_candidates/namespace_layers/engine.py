"""The parameter object and the module base of a small NumPy project kept in folders without
`__init__.py` (namespace packages): layers/ reaches this file with `from ..engine import ...`."""
import numpy as np


class Param:
    """A weight and, beside it, the gradient a backward adds up (zeros until then)."""

    def __init__(self, value):
        self.data = value
        self.grad = np.zeros_like(value)


class Module:
    def __call__(self, x):
        return self.forward(x)
