"""Plain classes (no torch.nn.Module) that hold their weights as torch tensors, compute with torch
ops and write their own backward(dout): checked as a NumPy class with a hand-written backward, on
float64 CPU tensors, weights written into the tensors, gradients read from the tensors kept beside
them (`grad_W`, `dgain`) and from what backward returns. Required constructor arguments giving the
weights' distribution (`mean`, `std`) get harmless values. Before: INTERFACE_ERROR (`mean`
required, or "expected a torch.nn.Module"). Planted bugs (a forgotten ReLU gate, a LayerNorm
backward missing the variance's path, scores scaled by the model width): MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text

FILE = "plain_torch_tensor_layers.py"
RIGHT = [("ffn", "HandFeedForward", ("grad_param:linear1.weight", "grad_param:linear2.bias")),
         ("layernorm", "HandLayerNorm", ("grad_param:weight", "grad_param:bias")),
         ("mha", "HandMultiHeadAttention", ("grad_input:key", "grad_param:out_proj.weight"))]


@pytest.mark.parametrize("component,name,grads", RIGHT)
def test_a_hand_written_torch_tensor_layer_is_checked_with_its_own_gradients(
        candidate_file, component, name, grads):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    compared = next(line for line in text.splitlines() if line.strip().startswith("compared:"))
    for key in ("output",) + grads:
        assert key in compared, text


def test_weight_distribution_arguments_the_constructor_requires_are_filled(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:HandFeedForward", examples=3)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "constructor argument 'mean': passed 0.0" in text, text
    assert "constructor argument 'std': passed 0.02" in text, text


@pytest.mark.parametrize("component,name,first", [
    ("ffn", "HandFeedForwardBUG", "grad_input:x"),
    ("layernorm", "HandLayerNormBUG", "grad_input:x"),
    ("mha", "HandMultiHeadAttentionBUG", "output")])
def test_planted_bugs_in_hand_written_torch_tensor_layers_are_mismatches(
        candidate_file, component, name, first):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert f"[{first}]" in text, text
