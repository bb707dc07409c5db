"""A forward whose claimed signature (`functools.wraps` of a narrower function) hides an argument its
code takes (`oracle_hostile/signature_hides_flag.py`: `causal=False`, ignored): the report listed the
arguments as claimed and named none hidden. Each named parameter of the code that the claim leaves
out is now named on the one-value line, "hidden by its claimed signature".
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

HERE = os.path.dirname(__file__)
HOSTILE = os.path.join(HERE, "oracle_hostile", "signature_hides_flag.py") + ":MultiHeadAttention"
PLAIN = os.path.join(HERE, "oracle_hostile", "ignores_constructor_flags.py") + ":MultiHeadAttention"


def _line(res) -> str:
    return next((n for n in res.notes if n.startswith("compared at one value only:")), "")


def test_an_argument_hidden_by_the_claimed_signature_is_named():
    res = check("mha", HOSTILE, runs=1, examples=3)
    assert res.verdict == "match", render_text(res)        # right at the default it is called with
    assert "causal hidden by its claimed signature" in _line(res), _line(res)


def test_a_forward_whose_signature_is_its_own_names_nothing_hidden():
    res = check("mha", PLAIN, runs=1, examples=3)
    assert "hidden by its claimed signature" not in _line(res), _line(res)
