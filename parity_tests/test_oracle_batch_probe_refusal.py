"""Code found written for one (T, d) sequence is handed batch 1 without its batch axis. A layer
taking batches but mixing their sequences (attention over every token of the batch, a norm's
variance pooled over the batch) that refused only a batch of three, as the probe's is, matched
with batches named as not compared. Such code is now also called, forward only, on a batch of two
(sandbox/assigned_form.batch_of_two) and its first sequence compared: the liars fail there, code
computing a batch right matches, and code written for one sequence still matches."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.modes import WHAT

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "batch_probe_refusal.py")
RIGHT = os.path.join(candidate_path(), "batch_probe_refused.py:PickyBatchAttention")
ONE_SEQUENCE = os.path.join(candidate_path(), "one_sequence_layers.py")


@pytest.mark.parametrize("component,name", [("mha", "BatchMixingAttention"),
                                            ("layernorm", "BatchStatsNorm")])
def test_a_batch_refused_only_at_the_probes_size_is_compared_and_fails(component, name):
    res = check(component, f"{HOSTILE}:{name}", examples=10)
    assert res.verdict == "mismatch", res.message
    assert res.detail["mode"] == "assigned_form" and WHAT["assigned_form"] in res.message


def test_code_computing_other_batches_right_matches():
    res = check("mha", RIGHT, examples=10)
    assert res.verdict == "match", res.message
    assert any("one sequence at a time" in n for n in res.notes), res.notes


@pytest.mark.parametrize("component,name", [("mha", "SequenceSelfAttention"),
                                            ("encoder_layer", "SequenceEncoderLayer")])
def test_code_written_for_one_sequence_still_matches(component, name):
    res = check(component, f"{ONE_SEQUENCE}:{name}", examples=10)
    assert res.verdict == "match", res.message
    assert "batch" in res.gaps
