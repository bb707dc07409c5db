"""Code right only on the values the search usually draws: inputs ~ N(0, 1) give attention
scores of a few units, where a softmax that forgets to subtract its row maximum is exact. The
structural cases of `sdpa` (core/structural.py) include one with scores far past exp's float64
range (`unstable_softmax`: NaN there; it got `match` before), drawn so that correct code of any
style still matches.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.components import get
from parity_tests.oracle.core.structural import cases
from parity_tests.oracle.reading.findings import Findings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
CANDS = candidate_path()


def _large(plan: list[dict]) -> list[dict]:
    return [ex for ex in plan if ex.get("scale", 1.0) > 1.0]


def test_a_softmax_without_its_row_maximum_is_caught():
    res = check("sdpa", os.path.join(HOSTILE, "unstable_softmax.py:attention"), examples=10)
    assert res.verdict == "non_finite", res.message
    assert res.example.get("scale", 1.0) > 1.0           # found by the large-score case
    assert "\"scale\":30.0" in res.replay          # the replay draws it again


@pytest.mark.parametrize("target", ["torch_attention.py:attention", "numpy_candidates.py:attention"])
@pytest.mark.parametrize("seed", [0, 3, 11])
def test_right_code_matches_on_the_large_score_case(target, seed):
    (ex,) = _large(cases(get("sdpa"), {}, Findings(), seed))
    res = check("sdpa", os.path.join(CANDS, target), replay=ex)
    assert res.verdict == "match", res.message
    assert max(abs(v) for row in res.case["input_values"]["q"] for v in _flat(row)) > 20


def _flat(x):
    return [y for item in x for y in _flat(item)] if isinstance(x, list) else [x]


def test_the_large_score_case_keeps_fixed_sizes_and_is_float64_only():
    (ex,) = _large(cases(get("sdpa"), {"max_len": 2, "max_batch": 1, "max_heads": 1}, Findings(), 0))
    assert (ex["B"], ex["H"], ex["Tq"], ex["Tk"], ex["dk"]) == (1, 1, 2, 2, 1)
    assert _large(cases(get("sdpa"), {}, Findings(), 0, "float32")) == []
    assert _large(cases(get("mha"), {}, Findings(), 0)) == []
