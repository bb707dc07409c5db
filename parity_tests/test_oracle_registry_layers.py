"""NumPy layers keeping their weights in a private registry dict keyed `name/weight` and taking back
their forward's input and cache in `backward(x, cache, dout, gradients)` are compared, weights and
gradients included, and a planted bug in a backward is still caught."""
from __future__ import annotations

import os

import numpy as np

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.layer_api_backward import plan
from parity_tests.oracle.reading.registry_dicts import is_registry, key_name

CANDS = os.path.join(candidate_path(), "registry_layers.py")


def test_a_registry_layer_norm_is_compared_with_its_gradients():
    res = check("layernorm", f"{CANDS}:RegistryLayerNorm", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not res.not_checked, res.not_checked


def test_a_layer_norm_backward_losing_its_gain_is_caught():
    res = check("layernorm", f"{CANDS}:RegistryLayerNormGainLost", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity == "grad_input:x", res.quantity


def test_nested_registry_parts_are_compared_with_their_gradients():
    res = check("ffn", f"{CANDS}:RegistryFeedForward", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not any(k.startswith("grad_") for k in res.not_checked), res.not_checked


def test_a_feed_forward_backward_ignoring_the_relu_is_caught():
    res = check("ffn", f"{CANDS}:RegistryFeedForwardNoReluMask", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity.startswith("grad_"), res.quantity


def test_roles_of_a_backward_taking_back_its_input_and_cache():
    def backward(x, cache, backwards_gradient, gradients):
        return x

    def plain(dout):
        return dout

    def unknown(x, weights, dout):
        return x

    assert plan(backward, {"x"}) == [("x", "input"), ("cache", "cache"),
                                     ("backwards_gradient", "upstream"), ("gradients", "collector")]
    assert plan(plain, {"x"}) is None
    assert plan(unknown, {"x"}) is None


def test_registry_dicts_and_their_keys():
    assert is_registry({"ffn/fc1/W": np.zeros((2, 3)), "ffn/fc1/b": np.zeros(3)})
    assert not is_registry({"W": np.zeros((2, 3)), "n": 3})
    assert not is_registry({})
    assert key_name("ffn/fc1/W") == "W"
    assert key_name("gain") == "gain"
