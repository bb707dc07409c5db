"""A causal flag that defaults to True (`Attention(d_model, num_heads, causal=True)`): the reference's
attention is not causal, so the oracle builds the flag False for the main runs and True for the
causal run, compares both and says so; a planted bug in the causal branch is still a mismatch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("causal_default_flags.py")


def test_a_causal_flag_defaulting_to_true_is_built_false_and_matches():
    res = check("mha", f"{FILE}:CausalByDefaultAttention", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("'causal': a causal flag that defaults to True" in n for n in res.notes), res.notes


def test_a_planted_bug_in_the_causal_branch_is_a_mismatch():
    res = check("mha", f"{FILE}:CausalByDefaultAttentionBUG", examples=15)
    assert res.verdict == "mismatch", render_text(res)
    assert "causal flag" in res.message, res.message
