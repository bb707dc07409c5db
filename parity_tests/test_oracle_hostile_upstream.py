"""The upstream gradient a backward receives must not tell a grader's probe from a training step:
`probe_shaped_upstream` answers right only when dout looks like a standard normal draw (the
gradient the components draw), and got `match` while every example's dout was one. Each example's
dout is now scaled and shifted by a draw from the check's secret (core/upstream.py).
"""
from __future__ import annotations

import os

import numpy as np

from parity_tests.oracle import check
from parity_tests.oracle.components import get
from parity_tests.oracle.core.upstream import mixed
from parity_tests.oracle.reading.findings import Findings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")


def test_a_backward_right_only_for_probe_shaped_gradients_is_a_mismatch():
    res = check("layernorm", os.path.join(HOSTILE, "probe_shaped_upstream.py:layernorm_forward"),
                examples=25)
    assert res.verdict == "mismatch", res.message
    assert res.quantity == "grad_input:x"


def test_the_upstream_gradients_of_a_check_do_not_share_a_scale_or_a_mean():
    comp = get("layernorm")
    stds, means = [], []
    for i in range(12):
        ex = {"B": 2, "T": 4, "d_model": 16, "eps": 1e-5, "scale": 1.0, "seed": i}
        case = mixed(comp.build(ex, "float64", Findings()), salt=7, dtype="float64")
        stds.append(float(case.dout.std()))
        means.append(float(case.dout.mean()))
    # a standard normal draw of 128 values: spread within [0.7, 1.4] and mean within 0.4 of 0
    # nearly always; here most examples are outside that band
    odd = [not (0.7 < s < 1.4 and abs(m) < 0.4) for s, m in zip(stds, means)]
    assert sum(odd) >= 6, (stds, means)
    assert max(stds) / min(stds) > 4


def test_one_check_gives_one_example_the_same_upstream_gradient_and_another_check_another():
    comp = get("layernorm")
    ex = {"B": 2, "T": 3, "d_model": 8, "eps": 1e-5, "scale": 1.0, "seed": 3}
    base = comp.build(ex, "float32", Findings())
    a, b = mixed(base, 11, "float32").dout, mixed(base, 11, "float32").dout
    c = mixed(base, 12, "float32").dout
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.array_equal(a.astype(np.float32).astype(np.float64), a)   # rounded to the dtype
