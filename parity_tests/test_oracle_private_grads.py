"""A NumPy attention whose bias-free projection parts keep their weight as `W` and its gradient
under a private name (`_dW`): the walk that proves a bias absent reads `_dW` as the gradient beside
`W`, not as a bias it cannot place, so the attention is compared (its gradients through the
`gradients` property); without that property the gradients are read from `_dW` by name, where
reading them by behaviour took a zero gradient's neighbour for it; planted bugs still fail."""
from __future__ import annotations

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise.absent import _gradient_beside

FILE = candidate_path("private_grad_parts.py")


@pytest.mark.parametrize("name, verdict", [
    ("PrivateGradAttention", "match"),
    ("PrivateGradAttentionWidthScale", "mismatch"),
])
def test_bias_free_parts_with_private_gradients_are_compared(name, verdict):
    res = check("mha", f"{FILE}:{name}", examples=15)
    assert res.verdict == verdict, render_text(res)
    assert "the candidate has no k_proj.bias" in render_text(res)   # said, not compared


def test_a_private_gradient_is_read_beside_its_parameter_only_when_the_shapes_agree():
    w, b = np.zeros((3, 3)), np.zeros(3)
    assert _gradient_beside("_dW", np.ones((3, 3)), {"W": w})
    assert _gradient_beside("__grad_b", np.ones(3), {"_b": b})
    assert not _gradient_beside("_dW", np.ones(3), {"W": w})
    assert not _gradient_beside("_bias", np.ones(3), {"W": w})


@pytest.mark.parametrize("name, verdict", [
    ("BareGradAttention", "match"),
    ("BareGradAttentionTransposedGrad", "mismatch"),
])
def test_private_gradients_are_read_by_name_without_a_gradients_dict(name, verdict):
    res = check("mha", f"{FILE}:{name}", examples=15)
    assert res.verdict == verdict, render_text(res)
    assert not any("found by behaviour" in n for n in res.notes), res.notes
