"""Constructor arguments the oracle does not know (`causal=False`, `bias=True`, `pre_norm=`): the
build leaves them at their defaults, so a candidate taking them and ignoring them matched and the
report named none of them (`oracle_hostile/ignores_constructor_flags.py`). Each one left at its
default is now named "not checked" on the one-value line, with its default.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, json_report, render_text  # noqa: E402

HERE = os.path.dirname(__file__)
HOSTILE = os.path.join(HERE, "oracle_hostile", "ignores_constructor_flags.py") + ":MultiHeadAttention"


def test_constructor_flags_left_at_their_defaults_are_named_not_checked():
    res = check("mha", HOSTILE, runs=1, examples=3)
    assert res.verdict == "match", render_text(res)        # right at the defaults it was built with
    line = next((n for n in res.notes if n.startswith("compared at one value only:")), "")
    for said in ("causal left at its default False in the constructor",
                 "bias left at its default True in the constructor"):
        assert said in line, line
    assert line in render_text(res)
    assert line in json_report(res)["notes"]


def test_hyperparameters_the_oracle_passes_are_not_named():
    res = check("mha", HOSTILE, runs=1, examples=3)
    line = next((n for n in res.notes if n.startswith("compared at one value only:")), "")
    for passed in ("d_model left", "num_heads left"):
        assert passed not in line, line
