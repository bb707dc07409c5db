"""Required constructor flags that only switch on extras (log_attention_weights, return_attn, ...):
the oracle passes False and says so; a required causal flag is built False and, in the causal run,
True (both compared); other flags that decide the computation (a bias, pre-norm) are not guessed."""
from __future__ import annotations

import inspect

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise import flags  # noqa: E402

FILE = candidate_path("required_flags.py")


def test_a_required_flag_gets_false_and_the_notes_say_so():
    res = check("mha", f"{FILE}:FlaggedAttention", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("'log_attention_weights'" in n and "passed False" in n for n in res.notes), res.notes


def test_a_planted_bug_behind_a_required_flag_is_a_mismatch():
    res = check("mha", f"{FILE}:FlaggedAttentionUnscaled", examples=25, shrink=False)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)


def test_a_required_causal_flag_is_checked_at_both_values():
    """Not a guess: built False for the main runs and True for the causal run. This candidate takes
    `causal` and never reads it, so the causal run differs."""
    res = check("mha", f"{FILE}:CausalFlagAttention", examples=15)
    assert res.verdict == "mismatch", render_text(res)
    assert "causal flag" in res.message, res.message
    assert any("'causal': a required causal flag" in n for n in res.notes), res.notes


@pytest.mark.parametrize("signature, flagged", [
    ("(log_attention_weights)", True), ("(return_attn)", True), ("(use_cache)", True),
    ("(verbose)", True), ("(anything: bool)", True), ("(use_bias)", False), ("(is_causal)", False), ("(causal)", False),
    ("(d_model)", False), ("(dropout)", False), ("(norm_first: bool)", False)])
def test_which_parameters_look_like_flags(signature, flagged):
    ns: dict = {}
    exec(f"def f{signature}: pass", ns)
    param = next(iter(inspect.signature(ns["f"]).parameters.values()))
    assert flags.looks_boolean(param) is flagged
