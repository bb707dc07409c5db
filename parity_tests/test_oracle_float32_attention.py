"""Attention that takes its softmax in float32 inside a float64 check: MATCH under a stated assumption
after a float32 re-check; the same code with a wrong scale is still a mismatch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("float32_softmax.py")


def test_float32_softmax_attention_matches_under_a_stated_assumption():
    res = check("mha", f"{FILE}:Float32SoftmaxAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert res.notes[0].startswith("assumption: the candidate computes part of its attention in float32"), res.notes
    assert "checked again with --dtype float32" in res.notes[0], res.notes[0]


def test_float32_softmax_attention_with_a_wrong_scale_stays_a_mismatch():
    res = check("mha", f"{FILE}:Float32SoftmaxAttentionWrongScale", examples=25)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)
    assert not any(n.startswith("assumption:") for n in res.notes), res.notes
