"""Partial credit in Gradescope results (`check --results`, `gradescope_results`): a group of
quantities scores only what a search earned it, never what the shrunk counterexample alone shows.

Hostile submissions in parity_tests/oracle_hostile/: partial_credit_minimal (output wrong
everywhere; weights and gradients right only with one query and one key, where the search's
counterexample shrinks to) and partial_credit_reversed (gradients wrong everywhere; output and
weights right only at the smallest sizes) each scored 4 of 6 (public and hidden) before groups were
judged by searches of their own; claims_no_masks (a masks gap) scored 2 of 3; weights_when_right
(output wrong, attention weights returned only where they are right) scored 2 of 4. Honest partial
credit (attention weights right, output wrong) still scores its group.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.core.completeness import REQUIREMENTS
from parity_tests.oracle.core.report import gradescope_results

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")


def spec(name: str) -> str:
    return f"{os.path.join(HOSTILE, name)}.py:attention"


def _results(tmp_path, target: str, *extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa", target,
                        "--examples", "10", "--quiet", "--results", "results.json", *extra],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 1, p.stdout + p.stderr
    return json.loads((tmp_path / "results.json").read_text())


@pytest.mark.parametrize("name", ["partial_credit_minimal", "partial_credit_reversed"])
def test_groups_right_only_on_the_shrunk_counterexample_score_nothing(tmp_path, name):
    results = _results(tmp_path, spec(name), "--hidden-seed", "7", "--hidden-examples", "10")
    assert len(results["tests"]) == 6, results
    assert results["score"] == 0.0, [(t["name"], t["score"]) for t in results["tests"]]
    for t in results["tests"]:
        if "(hidden)" in t["name"]:
            assert not any(ch.isdigit() for ch in t["output"]), t["output"]


def test_without_searches_of_their_own_other_groups_are_not_reached():
    res = check("sdpa", spec("partial_credit_minimal"), examples=10)
    assert res.verdict == "mismatch" and res.quantity == "output"
    # the shrunk counterexample has one query and one key: there the rest still matches
    assert set(res.detail["after_first_difference"].values()) == {"match"}
    results = gradescope_results(res)
    assert results["score"] == 0.0
    assert all("not checked" in t["output"] for t in results["tests"][1:]), results["tests"]


def test_a_gap_that_concerns_every_group_fails_every_group():
    res = check("sdpa", spec("claims_no_masks"), examples=8, require=REQUIREMENTS,
                score_groups=True)
    assert res.verdict == "incomplete" and "masks" in res.gaps
    results = gradescope_results(res)
    assert results["score"] == 0.0, [(t["name"], t["score"]) for t in results["tests"]]


RIGHT_WEIGHTS = """
import math

import torch


def attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return 2 * (weights @ value), weights        # the output (and its gradients) doubled
"""


def test_honest_partial_credit_is_kept(tmp_path):
    (tmp_path / "half.py").write_text(textwrap.dedent(RIGHT_WEIGHTS))
    results = _results(tmp_path, f"{tmp_path / 'half.py'}:attention")
    scores = {t["name"]: t["score"] for t in results["tests"]}
    assert scores == {"sdpa: output": 0.0, "sdpa: attention weights": 1.0,
                      "sdpa: input gradients": 0.0}, results
    weights = next(t for t in results["tests"] if t["name"] == "sdpa: attention weights")
    assert "a search comparing it alone" in weights["output"]


def test_weights_returned_only_where_they_are_right_score_nothing(tmp_path):
    results = _results(tmp_path, spec("weights_when_right"), "--require", "masks",
                       "--hidden-seed", "5", "--hidden-examples", "10")
    assert results["score"] == 0.0, [(t["name"], t["score"]) for t in results["tests"]]
    weights = next(t for t in results["tests"] if t["name"] == "sdpa: attention weights")
    assert "returned on some examples only" in weights["output"]


def test_a_match_with_weights_on_some_examples_only_does_not_score_them(tmp_path):
    src = (open(os.path.join(HOSTILE, "weights_when_right.py")).read()
           .replace("1.5 * (w @ V)", "w @ V"))
    (tmp_path / "fast_path.py").write_text(src)
    res = check("sdpa", f"{tmp_path / 'fast_path.py'}:attention", examples=10)
    assert res.verdict == "match", res.message
    scores = {t["name"]: t["score"] for t in gradescope_results(res)["tests"]}
    assert scores["sdpa: output"] == 1.0 and scores["sdpa: attention weights"] == 0.0, scores


def test_group_searches_share_the_checks_time_budget(monkeypatch):
    """A submission slow on purpose must not multiply --time-budget by the number of groups."""
    from parity_tests.oracle.core import entry
    from parity_tests.oracle.core.verdicts import CheckResult

    budgets = []

    class Slow:        # stands in for the search: each takes 1.5 s; the first fails at the output
        def __init__(self, component, candidate, opts, *args):
            self.opts, self.judge = opts, type("J", (), {"only": None})()

        def run(self, replay=None):
            budgets.append(self.opts.time_budget)
            time.sleep(1.5)
            if len(budgets) == 1:
                return CheckResult(verdict="mismatch", exit_code=1, component="sdpa",
                                   candidate="x", quantity="output",
                                   quantities=["output", "attention_weights", "grad_input:q"])
            return CheckResult(verdict="match", exit_code=0, component="sdpa", candidate="x")

    monkeypatch.setattr(entry, "Checker", Slow)
    res = check("sdpa", "slow.py:attention", time_budget=3.0, score_groups=True, require=("masks",))
    assert budgets[0] == 3.0 and len(budgets) == 2          # weights searched; then nothing left
    assert budgets[1] <= 1.5
    assert res.group_searches["attention weights"]["status"] == "passed"
    assert res.group_searches["input gradients"] == {"status": "failed", "verdict": "timeout",
                                                     "examples": 0, "partial": False}
