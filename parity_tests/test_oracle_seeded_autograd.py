"""Layers on an autograd of their own whose `Tensor.backward()` takes no gradient (the caller seeds
the output's `.grad`; gradients start as zero arrays the operators add into) are differentiated by
that class with the drawn upstream gradient; a gain that no gradient reaches is still caught, and a
class that seeds its own output (ones) is refused rather than compared with another gradient."""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.autograd_tensors import seeded_backward

CANDS = os.path.join(candidate_path(), "seeded_autograd_layers.py")


def test_a_norm_whose_tensor_backward_takes_no_gradient_is_compared():
    res = check("layernorm", f"{CANDS}:SeededLayerNorm", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not res.not_checked, res.not_checked


def test_a_gain_no_gradient_reaches_is_caught():
    res = check("layernorm", f"{CANDS}:SeededLayerNormGainUntracked", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity == "grad_param:weight", res.quantity


def test_a_backward_seeding_its_own_output_is_refused():
    class OnesSeeded:
        def __init__(self):
            self.data, self.grad = np.zeros(3), None

        def backward(self):
            self.grad = np.ones_like(self.data)

    with pytest.raises(TypeError, match="takes no gradient"):
        seeded_backward(OnesSeeded(), np.array([0.5, -1.0, 2.0]))
