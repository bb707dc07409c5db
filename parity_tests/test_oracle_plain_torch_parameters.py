"""Plain classes (no torch.nn.Module, no backward of their own) holding torch tensors that require
grad: checked on the torch path, their weights found by walking their attributes (a dict of
nn.Parameters, tensors made with requires_grad=True, an nn.Linear part's parameters by their own
names), the reference's values written into them and
their gradients read from each tensor's .grad after autograd's backward. Before: INTERFACE_ERROR
("built a ParamFeedForward, expected a torch.nn.Module"). Planted bugs (a weight reshaped where it
must be transposed, scores scaled by the model width): MISMATCH. A plain class holding no tensor
that requires grad is refused, the message saying so."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text

FILE = "plain_torch_parameters.py"


@pytest.mark.parametrize("component,name,grads", [
    ("ffn", "ParamFeedForward", ("grad_param:linear1.weight", "grad_param:linear2.bias")),
    ("ffn", "LinearPartFeedForward", ("grad_param:linear1.weight", "grad_param:linear2.weight")),
    ("ffn", "ScaledInitFeedForward", ("grad_param:linear1.weight", "grad_param:linear2.bias")),
    ("mha", "ParamDictAttention", ("grad_input:key", "grad_param:q_proj.weight",
                                   "grad_param:out_proj.bias"))])
def test_a_plain_class_holding_parameters_is_checked_with_autograd(candidate_file, component,
                                                                   name, grads):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    compared = next(line for line in text.splitlines() if line.strip().startswith("compared:"))
    for key in ("output",) + grads:
        assert key in compared, text
    assert "is no torch.nn.Module: its weights are the tensors requiring grad" in text, text


def test_a_dict_of_parameters_is_mapped_by_its_keys(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:ParamDictAttention", examples=3)
    text = render_text(res)
    assert res.verdict == "match", text
    for ref, cand in (("q_proj.weight", "w_q"), ("v_proj.bias", "b_v"), ("out_proj.weight", "w_o")):
        assert any(m.startswith(f"{ref} <- {cand}") for m in res.mapping), res.mapping


@pytest.mark.parametrize("component,name", [("ffn", "ParamFeedForwardBUG"),
                                            ("ffn", "LinearPartFeedForwardBUG"),
                                            ("ffn", "ScaledInitFeedForwardBUG"),
                                            ("mha", "ParamDictAttentionBUG")])
def test_planted_bugs_in_plain_parameter_classes_are_mismatches(candidate_file, component, name):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text      # output, or a gradient where the output is 0
    assert "first differing quantity:" in text, text


def test_a_torch_module_part_keeps_its_parameter_names(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:LinearPartFeedForward", examples=3)
    assert res.verdict == "match", render_text(res)
    for ref, cand in (("linear1.weight", "up.weight"), ("linear1.bias", "up.bias"),
                      ("linear2.weight", "down_weight")):
        assert any(m.startswith(f"{ref} <- {cand}") for m in res.mapping), res.mapping


def test_weights_that_are_no_leaf_tensors_are_named(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:ScaledInitFeedForward", examples=3)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "w1, w2 of ScaledInitFeedForward are no leaf tensors" in text, text


def test_a_plain_class_without_trainable_tensors_is_refused_saying_why(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:FrozenFeedForward", examples=3)
    text = render_text(res)
    assert res.verdict == "interface_error", text
    assert "holds no tensor that requires grad" in text, text
    assert "expected a torch.nn.Module" not in text, text
