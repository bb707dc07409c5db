"""NumPy module classes written for one (T, d) sequence at a time are found by a probe and handed
batch 1 without its batch axis (a NumPy backward its sequence's upstream gradient, its input
gradient given the axis back), the report naming batches as not compared; x @ W square matrices are
still found in that form; planted bugs are still caught."""
from __future__ import annotations

import os

import numpy as np

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise.one_sequence_modules import with_batch_axis

CANDS = os.path.join(candidate_path(), "one_sequence_layers.py")


def test_one_sequence_attention_with_a_backward_matches():
    res = check("mha", f"{CANDS}:SequenceSelfAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "batches were not compared" in render_text(res)
    assert not any(k.startswith("grad_") for k in res.not_checked), res.not_checked
    assert any("one sequence at a time" in n for n in res.notes), res.notes


def test_a_gradient_bug_in_one_sequence_attention_is_caught():
    res = check("mha", f"{CANDS}:SequenceSelfAttentionKeyUnscaled", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity.startswith("grad_"), res.quantity


def test_a_one_sequence_encoder_layer_using_x_at_w_matches():
    res = check("encoder_layer", f"{CANDS}:SequenceEncoderLayer", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("x @ W" in n for n in res.notes), res.notes


def test_a_one_sequence_encoder_layer_without_its_activation_is_caught():
    res = check("encoder_layer", f"{CANDS}:SequenceEncoderLayerNoRelu", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_one_sequence_attention_masking_the_future_itself_gets_causal_draws():
    res = check("mha", f"{CANDS}:SequenceCausalAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("masks the future itself" in n for n in res.notes), res.notes
    bad = check("mha", f"{CANDS}:SequenceCausalAttentionHidesItself", examples=12, shrink=False)
    assert bad.verdict != "match", render_text(bad)


def test_only_input_gradients_get_their_batch_axis_back():
    dx, dw = np.ones((3, 4)), np.ones((4, 4))
    got = with_batch_axis((dx, dw), 1, "mha")
    assert got[0].shape == (1, 3, 4) and got[1].shape == (4, 4)
    assert with_batch_axis(dx, 1, "mha").shape == (1, 3, 4)
    assert with_batch_axis({"dx": dx}, 1, "mha")["dx"].shape == (3, 4)
