"""GPT-2 style NumPy attention as a callable class: `__call__(self, inputs)` on one tensor (the
name alone once made the oracle take it as a list of inputs when it called the instance, an
ORACLE_ERROR), q|k|v packed (d, 3d), x @ W throughout, the future masked inside (the square output
projection's layout probe now expects each query's prefix averaged, not all keys). A planted
scale by d_k stays MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def attention(candidate_file):
    return candidate_file("callable_causal_attention.py")


def test_callable_causal_attention_with_in_out_matrices_matches(attention):
    res = check("mha", f"{attention}:CausalAttention", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any("masks the future itself" in n for n in res.notes), res.notes
    assert any("read as --weight-layout in_out" in n for n in res.notes), res.notes


def test_a_planted_scale_bug_in_callable_causal_attention_is_a_mismatch(attention):
    res = check("mha", f"{attention}:CausalAttention_BUG", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
