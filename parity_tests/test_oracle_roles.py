"""Attention matrices whose names say nothing, placed by what they do: an input transformed by a
random orthogonal matrix is undone by exactly one matrix (the projection of that input), the output
projection turns the output by the same matrix. The probe decides only where the reference's
weights go: a wrong candidate still mismatches, and one the probe cannot read keeps the order
mapping (and fails there)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check  # noqa: E402
from parity_tests.oracle.core.report import render_text  # noqa: E402

ROLES = candidate_path("unnamed_roles.py")


def test_matrices_named_a_to_d_in_another_order_are_placed_by_probing():
    res = check("mha", f"{ROLES}:Mixer", examples=6)
    assert res.verdict == "match", render_text(res)
    assert any("q_proj <- C, k_proj <- A, v_proj <- D, out_proj <- B" in n for n in res.notes), \
        res.notes
    assert any("role found by probing" in m for m in res.mapping), res.mapping


def test_a_planted_bug_is_still_caught_after_probing():
    res = check("mha", f"{ROLES}:MixerSwappedScale", examples=30)
    assert res.verdict == "mismatch", render_text(res)
    assert any("sqrt(d_model)" in n for n in res.notes), res.notes


def test_a_candidate_whose_roles_cannot_be_told_keeps_the_order_mapping_and_fails():
    res = check("mha", f"{ROLES}:MixerSharedQK", examples=30)
    assert res.verdict == "mismatch", render_text(res)
    assert not any("placed by probing" in n for n in res.notes), res.notes
