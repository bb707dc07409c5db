"""PyTorch module classes written for one (T, d) sequence at a time are found by the same probe as
NumPy ones and handed batch 1 without its batch axis (autograd's leaves keep it, so input gradients
come back (1, T, d)); the report names batches as not compared; planted bugs are still caught."""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "one_sequence_torch_layers.py")


def test_one_sequence_torch_attention_matches_with_gradients():
    res = check("mha", f"{CANDS}:SequenceTorchAttention", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "batches were not compared" in text
    assert not any(k.startswith("grad_") for k in res.not_checked), res.not_checked
    assert "grad_input:x" in text and "grad_param:q_proj.weight" in text
    assert any("one sequence at a time" in n for n in res.notes), res.notes


def test_an_unscaled_one_sequence_torch_attention_is_caught():
    res = check("mha", f"{CANDS}:SequenceTorchAttentionUnscaled", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_one_sequence_torch_encoder_layer_matches():
    res = check("encoder_layer", f"{CANDS}:SequenceTorchEncoderLayer", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "batches were not compared" in render_text(res)


def test_a_one_sequence_torch_encoder_layer_with_tanh_is_caught():
    res = check("encoder_layer", f"{CANDS}:SequenceTorchEncoderLayerTanh", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
