"""Options a check draws at one value only. A layer's constructor may take `norm_first` and
`activation` and ignore them (`oracle_hostile/ignores_norm_first.py`: always post-norm, ReLU); a
check draws the assignment's value of each (or the default), so such code matches, and the report
used to say only "every quantity matched". It now names, in a line of its own, what every compared
example held at one value (the dtype too) and the check to add; that check fails the code.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

SPEC = os.path.join(os.path.dirname(__file__), "oracle_hostile", "ignores_norm_first.py") + \
    ":EncoderLayer"


def test_a_match_names_the_options_it_held_at_one_value():
    res = check("encoder_layer", SPEC, runs=1, examples=5)
    assert res.verdict == "match", render_text(res)     # right at the values drawn
    line = next((n for n in res.notes if n.startswith("compared at one value only:")), None)
    assert line is not None, res.notes
    for held in ("dtype float64", "masks bool", "norm_first False", "activation relu", "--set norm_first=true",
                 "--set activation=gelu", "--dtype float32"):
        assert held in line, line
    assert "compared at one value only:" in render_text(res)


def test_the_check_the_line_asks_for_fails_the_code():
    res = check("encoder_layer", SPEC, runs=1, examples=5, settings={"norm_first": True}, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
