"""A NumPy layer whose attention has no biases and whose norms keep gradient buffers in a private
dict (`self._grads = {"gamma": zeros(d), ...}`): those buffers are gradients, not arrays that could
be the attention's biases, so the biases are found absent (named, not compared) and the layer is
checked. Before, the (d,) buffers left the biases "cannot tell where" (INTERFACE_ERROR). Planted
bug: MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "private_grad_dict_norms.py"


def test_bias_free_attention_beside_private_gradient_dicts_is_checked(candidate_file):
    res = check("encoder_layer", f"{candidate_file(FILE)}:GradDictEncoderLayer", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "self_attn.q_proj.bias: the candidate has no such parameter" in text, text


def test_the_planted_bug_beside_private_gradient_dicts_is_a_mismatch(candidate_file):
    res = check("encoder_layer", f"{candidate_file(FILE)}:GradDictEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
