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


def test_a_float32_softmax_difference_far_below_float32_rounding_is_still_named_float32_sized():
    """Two keys and one feature: the float32 softmax's error is multiplied by the small spread of the
    two values, so the shrunk case differs by only ~5e-11 of the output's scale. It must still be
    read as float32 rounding (which sends the check to the float32 re-check), not as a wrong
    result. This is the case a search once shrank to."""
    case = {"B": 1, "Tq": 1, "Tk": 2, "d_model": 1, "num_heads": 1,
            "mask": {"kind": "none", "keep": None}, "seed": 1756177299}
    res = check("mha", f"{FILE}:Float32SoftmaxAttention", replay=case)
    assert res.verdict == "mismatch", render_text(res)     # a replay keeps the float64 answer
    assert res.detail["max_abs_err"] < 1e-9, res.detail    # the tiny difference this is about
    assert res.float32_sized, res.notes
    assert any("within float32 rounding size" in n for n in res.notes), res.notes
