"""Attention spelt with three-axis einsums (`np.einsum("bqd,bkd->bqk", q, k)`) is written for
(batch*heads, T, d) tensors: the oracle merges batch and heads on the way in and splits them on the
way out, as for `.transpose(0, 2, 1)` code; a planted scale bug is still a mismatch, and an einsum
taking a head axis (`...` or four letters) is not read as three-axis code."""
from __future__ import annotations

import ast
import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise import bh_layout

CANDS = os.path.join(candidate_path(), "einsum_three_axis_attention.py")


def test_three_axis_einsum_attention_gets_merged_heads_and_matches():
    res = check("sdpa", f"{CANDS}:einsum_attention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("(batch*heads, T, d)" in n for n in res.notes), res.notes


def test_a_planted_scale_bug_in_three_axis_einsum_attention_is_a_mismatch():
    res = check("sdpa", f"{CANDS}:einsum_attention_unscaled", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_only_einsums_with_three_axes_everywhere_count():
    def spelt(text):
        return any(bh_layout._einsum_three(n) for n in ast.walk(ast.parse(text)))
    assert spelt('np.einsum("bqd,bkd->bqk", q, k)') and spelt('torch.einsum("b i d, b j d -> b i j", q, k)')
    assert not spelt('np.einsum("bhqd,bhkd->bhqk", q, k)')
    assert not spelt('np.einsum("...qd,...kd->...qk", q, k)')
    assert not spelt('np.einsum("bqd,dk->bqk", x, w)')
