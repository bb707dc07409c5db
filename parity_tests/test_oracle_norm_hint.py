"""A mismatch's hint may not contradict what the norm-order probe decided. The probe
(recognise/norm_order) found `oracle_hostile/norm_order_by_gain.py` pre-norm (it is, while every
norm gain is 0) and the reference was drawn pre-norm; every scored example is post-norm, and the
hint used to be "post-norm instead of pre-norm (--set norm_first=false)": a setting to change,
against the probe's own finding. It now says the placement changed with the weights, and offers no
setting.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

SPEC = os.path.join(os.path.dirname(__file__), "oracle_hostile", "norm_order_by_gain.py") + ":EncoderLayer"


def test_the_hint_agrees_with_the_norm_order_probe():
    res = check("encoder_layer", SPEC, runs=1, examples=3)
    assert res.verdict == "mismatch", render_text(res)
    hints = [n for n in res.notes if n.startswith("likely cause:")]
    assert any("behaved as pre-norm" in h for h in hints), res.notes
    assert not any("--set norm_first" in h for h in hints), hints
