"""A NumPy backward returning its input gradients grouped in one tuple ahead of dicts of parameter
gradients (`return (dq, dk, dv), dw, db`) has each input's gradient read in the forward's order,
and a planted bug in one of them is still caught; a tuple of another length is left as it came."""
from __future__ import annotations

import os

import numpy as np

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise.grouped_input_grads import ungroup

CANDS = os.path.join(candidate_path(), "grouped_input_grads.py")


def test_input_gradients_grouped_in_one_tuple_are_read():
    res = check("mha", f"{CANDS}:GroupedGradAttention", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not any(k.startswith("grad_input:") for k in res.not_checked), res.not_checked


def test_a_planted_bug_in_a_grouped_input_gradient_is_caught():
    res = check("mha", f"{CANDS}:GroupedGradAttentionKeyUnscaled", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity == "grad_input:key", res.quantity


def test_only_a_leading_group_of_one_gradient_per_input_is_unpacked():
    a, b, c = np.zeros(1), np.ones(1), np.full(1, 2.0)
    assert ungroup(((a, b, c), {"w": a}), 3) == (a, b, c, {"w": a})
    grouped = ((a, b), {"w": a})
    assert ungroup(grouped, 3) is grouped
    assert ungroup((a, b, c), 3) == (a, b, c)
