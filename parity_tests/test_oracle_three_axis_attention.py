"""Scaled dot-product attention written for 3-axis (batch, T, d) arrays without bmm (NumPy,
`k.transpose(0, 2, 1)`): the oracle hands it batch and heads merged, splits the output and the
weights back (the weights are not read as averaged over the heads), and says so. A planted softmax
over the wrong axis stays MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def attention(candidate_file):
    return candidate_file("three_axis_attention.py")


def test_three_axis_attention_gets_merged_heads_and_matches(attention):
    res = check("sdpa", f"{attention}:three_axis_attention", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("batch and heads merged" in n for n in res.notes), res.notes
    assert "attention_weights" in res.checked, res.checked


def test_a_planted_softmax_axis_bug_in_three_axis_attention_is_a_mismatch(attention):
    res = check("sdpa", f"{attention}:three_axis_attention_BUG", examples=15, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
