"""Partial credit after a search stopped midway (core/groups.py): `missing_gradient` stood only for
a verdict decided after every example (forward-only code, gradients the oracle cannot read), so a
worker's `missing_gradient` met on one example gave no group a search of its own, and the groups
compared on the examples before it scored (the results file took the verdict as a finished
search). Such a search now gets them, and its results file scores by them; code whose gradients
are missing by design keeps its credit for what it computes.
"""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, gradescope_results
from parity_tests.oracle.core.groups import needs_follow_up

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "detached_midway.py")


def test_a_missing_gradient_met_midway_earns_no_group():
    res = check("sdpa", f"{HOSTILE}:attention", examples=10, score_groups=True)
    assert res.verdict == "missing_gradient", res.message
    assert res.example is not None and needs_follow_up(res)
    assert set(res.group_searches) == {"output", "attention weights"}
    assert all(g["status"] == "failed" for g in res.group_searches.values())
    assert gradescope_results(res)["score"] == 0


def test_forward_only_code_required_to_give_gradients_keeps_its_output_credit():
    right = os.path.join(candidate_path(), "copies_in_modes.py:copying_numpy_attention")
    res = check("sdpa", right, examples=10, score_groups=True, require=("gradients",))
    assert res.verdict == "missing_gradient", res.message
    assert res.example is None and not needs_follow_up(res)
    scores = {t["name"]: t["score"] for t in gradescope_results(res)["tests"]}
    assert scores["sdpa: output"] == 1 and scores["sdpa: attention weights"] == 1
