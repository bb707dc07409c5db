"""A NumPy position-wise feed-forward importing its parts through the package it lives two folders
deep in (`from mlppkg.model.parts import relu`) while its folder also holds mlppkg.py. Our own
code; the BUG variant leaves out the activation."""
from __future__ import annotations

import numpy as np

from mlppkg.model.parts import no_activation, relu


class FeedForward:
    activation = staticmethod(relu)

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.W1, self.b1 = rng.standard_normal((d_model, d_ff)), np.zeros(d_ff)
        self.W2, self.b2 = rng.standard_normal((d_ff, d_model)), np.zeros(d_model)

    def __call__(self, x):
        return self.activation(x @ self.W1 + self.b1) @ self.W2 + self.b2


class FeedForward_BUG(FeedForward):
    activation = staticmethod(no_activation)
