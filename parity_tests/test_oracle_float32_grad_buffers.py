"""A NumPy layer built in float32 whose gradient buffers, allocated beside its weights, are filled in
place has them widened with its weights and matches in a float64 check; a planted bug in its
backward is still caught."""
from __future__ import annotations

import os

import numpy as np

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.grad_buffers import widen
from parity_tests.oracle.reading.slots import GRAD_PATTERNS

CANDS = os.path.join(candidate_path(), "float32_grad_buffers.py")


def test_float32_gradient_buffers_filled_in_place_match():
    res = check("ffn", f"{CANDS}:BufferedFeedForward", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not any(k.startswith("grad_") for k in res.not_checked), res.not_checked


def test_a_bug_in_a_buffered_gradient_is_caught():
    res = check("ffn", f"{CANDS}:BufferedFeedForwardBiasMean", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity == "grad_param:linear2.bias", res.quantity


def test_only_narrower_buffers_of_the_weight_shape_are_widened():
    class Layer:
        pass

    layer, new = Layer(), np.ones((2, 3))
    layer.grads = {"W": np.zeros((2, 3), np.float32), "b": np.zeros(3, np.float32)}
    layer.dW = np.zeros((3, 2), np.float32)          # another shape: left alone
    assert widen([layer], "W", GRAD_PATTERNS, new) == ["grads['W']"]
    assert layer.grads["W"].dtype == np.float64 and layer.grads["b"].dtype == np.float32
    assert layer.dW.dtype == np.float32
    assert widen([layer], "W", GRAD_PATTERNS, np.ones((2, 3), np.float32)) == []
