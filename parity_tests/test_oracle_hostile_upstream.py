"""The upstream gradient a backward receives must not tell a grader's probe from a training step:
`probe_shaped_upstream` answers right only when dout looks like a standard normal draw (the
gradient the components draw), and got `match` while every example's dout was one. Each example's
dout is now scaled and shifted (core/upstream.py).

The array values must not repeat from one run of `check` to the next: code holding answers for the
inputs the public search draws (here: the digests of what one run handed over, right only on
those) got `match` at every later run with the same --seed. Each example's array seed is now mixed
with the check's secret.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os

import numpy as np

from parity_tests.oracle import check
from parity_tests.oracle.components import get
from parity_tests.oracle.core.upstream import mixed, secret_seed
from parity_tests.oracle.reading.findings import Findings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")


def test_a_backward_right_only_for_probe_shaped_gradients_is_a_mismatch():
    res = check("layernorm", os.path.join(HOSTILE, "probe_shaped_upstream.py:layernorm_forward"),
                examples=25, shrink=False)
    assert res.verdict == "mismatch", res.message
    assert res.quantity == "grad_input:x"


def test_the_upstream_gradients_of_a_check_do_not_share_a_scale_or_a_mean():
    comp = get("layernorm")
    stds, means = [], []
    for i in range(12):
        ex = {"B": 2, "T": 4, "d_model": 16, "eps": 1e-5, "scale": 1.0, "seed": i}
        case = mixed(comp.build(ex, "float64", Findings()), "float64")
        stds.append(float(case.dout.std()))
        means.append(float(case.dout.mean()))
    # a standard normal draw of 128 values: spread within [0.7, 1.4] and mean within 0.4 of 0
    # nearly always; here most examples are outside that band
    odd = [not (0.7 < s < 1.4 and abs(m) < 0.4) for s, m in zip(stds, means)]
    assert sum(odd) >= 6, (stds, means)
    assert max(stds) / min(stds) > 4


def test_one_check_gives_one_example_the_same_values_and_another_check_other_ones():
    ex = {"B": 2, "T": 3, "d_model": 8, "eps": 1e-5, "scale": 1.0, "seed": 3}
    assert secret_seed(ex, 11) == secret_seed(ex, 11)
    assert secret_seed(ex, 11)["seed"] != secret_seed(ex, 12)["seed"]
    assert {k: v for k, v in secret_seed(ex, 11).items() if k != "seed"} == \
        {k: v for k, v in ex.items() if k != "seed"}           # the sizes are the search's
    base = get("layernorm").build(ex, "float32", Findings())
    a, b = mixed(base, "float32").dout, mixed(base, "float32").dout
    assert np.array_equal(a, b)                                  # a replay gets the same gradient
    assert np.array_equal(a.astype(np.float32).astype(np.float64), a)   # rounded to the dtype


def _sdpa(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -1e30)
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


def test_answers_held_for_one_runs_inputs_do_not_match_at_the_next_run(tmp_path):
    seen = []

    def recorder(q, k, v, mask=None):      # one run of the search, in this process
        seen.append(hashlib.sha1(np.ascontiguousarray(q).tobytes()).hexdigest())
        return _sdpa(q, k, v, mask)

    first = check("sdpa", recorder, examples=6)
    assert first.verdict == "match", first.message
    src = open(os.path.join(HOSTILE, "answers_for_known_inputs.py"), encoding="utf-8").read()
    held = tmp_path / "held.py"
    held.write_text(src.replace("KNOWN: set = set()", f"KNOWN: set = {set(seen)!r}"),
                    encoding="utf-8")
    res = check("sdpa", f"{held}:attention", examples=6, shrink=False)
    assert res.verdict in ("mismatch", "non_finite"), res.message


def test_entries_the_component_zeroed_stay_zero():
    # a whole model's dout is 0 at padded target positions (no loss there); a shift there would
    # hand the candidate a gradient the reference never sees
    base = get("layernorm").build({"B": 2, "T": 3, "d_model": 8, "eps": 1e-5, "scale": 1.0,
                                   "seed": 5}, "float64", Findings())
    d = base.dout.copy()
    d[1, 2] = 0.0
    got = mixed(dataclasses.replace(base, dout=d), "float64").dout
    assert np.all(got[1, 2] == 0.0)
    assert np.all(got[0] != 0.0)
