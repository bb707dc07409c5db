"""A plain class (not a torch.nn.Module) whose code uses torch, checked as a decoder layer: the
oracle says it needs a torch.nn.Module (INTERFACE_ERROR). Before, a probe looking for
nn.MultiheadAttention called `.modules()` on it and the oracle failed itself (ORACLE_ERROR,
"'PlainTensorDecoderLayer' object has no attribute 'modules'")."""
from __future__ import annotations

from parity_tests.oracle import check, render_text


def test_a_plain_class_over_torch_tensors_is_an_interface_error_not_an_oracle_error(candidate_file):
    res = check("decoder_layer", f"{candidate_file('plain_torch_class.py')}:PlainTensorDecoderLayer",
                examples=3)
    text = render_text(res)
    assert res.verdict == "interface_error", text
    assert "expected a torch.nn.Module" in text, text
