"""Layers built on an autograd of their own (a micrograd-style `Tensor` with `.data`, `.grad` and
`backward(grad)`, layers with no backward method) are handed their inputs as leaves of that class
and differentiated by it: right code matches with every gradient compared, planted bugs (one only
in a gradient) still fail, and code without such a class keeps NumPy's path."""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.autograd_tensors import tensor_class
from parity_tests.oracle.reading.loader import load

CANDS = os.path.join(candidate_path(), "own_autograd_layers.py")


def test_a_norm_on_its_own_autograd_is_compared_with_its_gradients():
    res = check("layernorm", f"{CANDS}:TinyLayerNorm", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not res.not_checked, res.not_checked


def test_a_feed_forward_on_its_own_autograd_is_compared_with_its_gradients():
    res = check("ffn", f"{CANDS}:TinyFeedForward", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not res.not_checked, res.not_checked


def test_planted_bugs_on_an_own_autograd_are_caught():
    res = check("layernorm", f"{CANDS}:TinyLayerNormEpsOutside", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    bad = check("ffn", f"{CANDS}:TinyFeedForwardLeakyGrad", examples=20, shrink=False)
    assert bad.verdict == "mismatch" and bad.quantity.startswith("grad_"), render_text(bad)


def test_only_a_module_defining_an_autograd_tensor_class_gets_one():
    assert tensor_class(load(f"{CANDS}:TinyLayerNorm")).__name__ == "Tensor"
    plain = os.path.join(candidate_path(), "numpy_part_buffers.py")
    assert tensor_class(load(f"{plain}:BufferedGradAttention")) is None
