"""Layers on an autograd of their own whose `Tensor.backward()` takes no gradient and seeds its
output with ones (then cuts its graph) are differentiated through the scalar `(out * upstream).sum()`
of the class's own operators, so the drawn upstream gradient reaches them; a gain no gradient reaches
is still caught, and such a class without `sum` is still refused."""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.autograd_tensors import seeded_backward

CANDS = os.path.join(candidate_path(), "ones_seeded_autograd_layers.py")


def test_a_norm_whose_tensor_backward_seeds_ones_is_compared():
    res = check("layernorm", f"{CANDS}:OnesSeededLayerNorm", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not res.not_checked, res.not_checked


def test_a_gain_no_gradient_reaches_is_still_caught():
    res = check("layernorm", f"{CANDS}:OnesSeededLayerNormGainUntracked", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity == "grad_param:weight", res.quantity


def test_a_ones_seeding_class_without_sum_is_still_refused():
    class Seeded:
        def __init__(self, data=0.0):
            self.data, self.grad, self.parents = np.zeros(3) + data, None, ()

        def __mul__(self, other):
            return Seeded(self.data * other.data)

        def backward(self):
            self.grad = np.ones_like(self.data)

    with pytest.raises(TypeError, match="takes no gradient"):
        seeded_backward(Seeded(), np.array([0.5, -1.0, 2.0]), Seeded)


def test_attention_of_own_tensors_masking_the_future_itself_is_found_causal():
    res = check("mha", f"{CANDS}:OnesSeededCausalAttention", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any("masks the future itself" in n for n in res.notes), res.notes


def test_attention_of_own_tensors_left_unscaled_still_fails():
    res = check("mha", f"{CANDS}:OnesSeededCausalAttentionUnscaled", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
