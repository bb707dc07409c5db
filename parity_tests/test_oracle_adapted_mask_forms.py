"""A mask form the oracle adapted to is not the assignment's. Where a layer refused the
(batch, 1, Tq, Tk) mask in the mask-rank probe, masks were handed over as (batch, Tq, Tk) ever
after and nothing was left uncompared; code refusing that form only when the call looked like the
probe's, and reading it wrongly everywhere else, matched with full marks (so did an attention
function refusing (batch, heads, T, d) only in the bh-layout probe). An adapted form is now the
gap `mask_convention` (sandbox/adapted_masks.adapted_form, core/completeness), as an adapted
convention is, and every example also runs once in the assignment's form (sandbox/assigned_form.py):
code computing it wrongly fails, code refusing it everywhere is not compared there; a layer taking
three axes honestly matches with nothing uncompared where the assignment declares that form.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, gradescope_results
from parity_tests.oracle.components import get
from parity_tests.oracle.core.completeness import REQUIREMENTS, find_gaps
from parity_tests.oracle.core.modes import WHAT
from parity_tests.oracle.core.options import Options
from parity_tests.oracle.reading.findings import Findings

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "rank_probe_refusal.py:MultiHeadAttention")
RIGHT = os.path.join(candidate_path(), "head_axis_masks.py:MultiHeadAttention")
BH_HOSTILE = os.path.join(os.path.dirname(HOSTILE), "bh_probe_refusal.py:attention")


def test_a_form_refused_only_in_the_probe_is_a_gap_and_earns_nothing_when_required():
    res = check("mha", HOSTILE, examples=6, score_groups=True, require=REQUIREMENTS)
    assert res.verdict in ("incomplete", "mismatch"), res.message      # the form's run fails too
    assert "(batch, 1, Tq, Tk)" in res.gaps["mask_convention"]
    assert gradescope_results(res)["score"] == 0


def test_a_quick_check_names_the_adapted_form():
    res = check("mha", HOSTILE, examples=4)
    assert "mask_convention" in res.gaps and "--mask-rank 3" in res.gaps["mask_convention"]


@pytest.mark.parametrize("component,target", [("mha", HOSTILE), ("sdpa", BH_HOSTILE)])
def test_the_assignments_form_refused_only_in_the_probe_is_compared_and_fails(component, target):
    res = check(component, target, examples=10)
    assert res.verdict == "mismatch", res.message
    assert res.detail["mode"] == "assigned_form" and WHAT["assigned_form"] in res.message


def test_a_layer_refusing_the_assignments_form_everywhere_is_not_compared_in_it():
    res = check("mha", RIGHT, examples=10)
    assert res.verdict == "match", res.message         # the gap says what was not compared
    assert "mask_convention" in res.gaps


def test_the_same_refusal_under_the_assignments_declared_form_is_compared_and_fails():
    res = check("mha", HOSTILE, examples=10, mask_rank=4, declared=("mask_rank",), shrink=False)
    assert res.verdict == "mismatch", res.message


def test_a_layer_taking_three_axes_honestly_matches_where_the_assignment_declares_them():
    res = check("mha", RIGHT, examples=6, mask_rank=3, declared=("mask_rank",), require=REQUIREMENTS)
    assert res.verdict == "match", res.message
    assert res.gaps == {}


def test_a_form_the_worker_names_is_read_only_as_a_gap():
    comp = get("mha")
    caps = Findings.from_wire({"mask_form": "rank3"}, comp, {})
    assert caps.mask_form == "rank3"
    assert Findings.from_wire({"mask_form": "(B, 1, Tq, Tk)"}, comp, {}).mask_form is None
    assert "mask_convention" in find_gaps(comp, caps, Options(), {}, ())
    assert find_gaps(comp, caps, Options(mask_rank=3), {}, ()) == {}
