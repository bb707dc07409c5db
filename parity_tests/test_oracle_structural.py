"""The search covers what a grade claims: the structural cases of attention (self and cross at equal
and unequal lengths, every mask kind at equal lengths, batch 1 and several, one head and several)
are compared on purpose before the random search, in the public and the hidden search alike.
`keys_from_query_when_equal` (wrong only for cross-attention with equal lengths >= 2) used to get
`match` from the public search (seed 0, 25 examples).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.oracle import check
from parity_tests.oracle.components import get
from parity_tests.oracle.core.structural import cases
from parity_tests.oracle.reading.findings import Findings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")


@pytest.mark.parametrize("seed", [0, 2024])
def test_code_wrong_only_on_equal_length_cross_attention_is_caught(seed):
    pytest.importorskip("torch")
    res = check("mha", os.path.join(HOSTILE, "keys_from_query_when_equal.py:MultiHeadAttention"),
                examples=25, seed=seed)
    assert res.verdict == "mismatch", res.message
    assert res.example["Tq"] == res.example["Tk"] >= 2


@pytest.mark.parametrize("component", ["sdpa", "mha"])
def test_the_plan_holds_every_structure(component):
    comp = get(component)
    plan = cases(comp, {}, Findings(), seed=0)
    kinds = {ex["mask"]["kind"] for ex in plan}
    assert kinds == set(comp.masks[0].kinds)
    assert any(ex["Tq"] == ex["Tk"] >= 2 and ex["mask"]["kind"] == "random_2d" for ex in plan)
    assert any(ex["Tq"] != ex["Tk"] for ex in plan)
    assert {ex["B"] for ex in plan} >= {1, 2, 3}
    heads = {ex["H"] if component == "sdpa" else ex["num_heads"] for ex in plan}
    assert 1 in heads and max(heads) >= 2
    for ex in plan:                                  # no query row without a key to attend
        if ex["mask"]["keep"] is not None:
            assert np.asarray(ex["mask"]["keep"]).any(-1).all()
    assert cases(comp, {}, Findings(), seed=1)[0]["seed"] != plan[0]["seed"]     # hidden: other values


def test_fixed_sizes_are_kept_and_self_attention_draws_equal_lengths():
    plan = cases(get("mha"), {"d_model": 6, "num_heads": 3, "max_len": 2}, Findings(self_attention=True),
                 seed=0)
    assert all(ex["d_model"] == 6 and ex["num_heads"] == 3 for ex in plan)
    assert all(ex["Tq"] == ex["Tk"] <= 2 for ex in plan)


def test_code_sized_for_the_drawn_lengths_is_caught_and_earns_nothing():
    """`fits_the_draws` (keys past 16 dropped, the search drawing 1 to 16) got `match` and full
    marks; a case longer than the search draws (19 queries, 37 keys) fails it, and every group,
    each judged by a search of its own that holds that case too, scores nothing."""
    from parity_tests.oracle import gradescope_results

    res = check("sdpa", os.path.join(HOSTILE, "fits_the_draws.py:attention"), examples=10,
                score_groups=True)
    assert res.verdict == "mismatch", res.message
    assert res.example["Tk"] > 16
    assert gradescope_results(res)["score"] == 0


@pytest.mark.parametrize("component", ["sdpa", "mha"])
def test_the_long_case_respects_a_fixed_length(component):
    comp = get(component)
    longest = max(max(ex["Tq"], ex["Tk"]) for ex in cases(comp, {}, Findings(), seed=0))
    assert longest > 16
    assert all(max(ex["Tq"], ex["Tk"]) <= 8 for ex in cases(comp, {"max_len": 8}, Findings(), seed=0))
