"""Scaled dot-product attention that asserts three axes on its inputs (`assert q.dim() == 3`,
torch, `@` that would run on four): the oracle hands it batch and heads merged, splits the output
and weights back, and says so. A planted scale by d_k stays MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def attention(candidate_file):
    return candidate_file("axis_checked_attention.py")


def test_attention_asserting_three_axes_gets_merged_heads_and_matches(attention):
    res = check("sdpa", f"{attention}:AxisCheckedAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("batch and heads merged" in n for n in res.notes), res.notes


def test_a_planted_scale_bug_in_attention_asserting_three_axes_is_a_mismatch(attention):
    res = check("sdpa", f"{attention}:AxisCheckedAttention_BUG", examples=10, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
