"""A plain class (not a torch.nn.Module) whose code uses torch and has a backward of its own,
checked as a decoder layer that holds one weight for a whole layer's worth: the oracle reads it as
a hand-written layer over torch tensors (test_oracle_plain_torch_layers.py) and says where the
mapping fails (INTERFACE_ERROR naming the reference weights it cannot place). It once failed itself
(ORACLE_ERROR, "'PlainTensorDecoderLayer' object has no attribute 'modules'"), and later refused
the class as no torch.nn.Module."""
from __future__ import annotations

from parity_tests.oracle import check, render_text


def test_a_plain_class_over_torch_tensors_is_read_and_its_unplaceable_weights_named(candidate_file):
    res = check("decoder_layer", f"{candidate_file('plain_torch_class.py')}:PlainTensorDecoderLayer",
                examples=3)
    text = render_text(res)
    assert res.verdict == "interface_error", text
    assert "cannot tell where the candidate keeps self_attn.q_proj.weight" in text, text
    assert "expected a torch.nn.Module" not in text, text
