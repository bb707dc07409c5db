"""A forward taking its inputs as one list (`forward([q, k, v])`) never met the aliased, strided
and relaid modes: the list was built before those modes handed its items over in another form.
The modes now replace the list's items too (sandbox/layout_modes.relist); right list-taking code
branching on the same things matches.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "listed_input_paths.py")
RIGHT = os.path.join(candidate_path(), "listed_input_paths.py")

ATTACKS = [
    ("sdpa", "attention", ("strided", "relaid")),          # torch, unscaled on a non-contiguous q
    ("sdpa", "numpy_attention", ("strided", "relaid")),    # NumPy, the same
    ("mha", "MultiHeadAttention", ("aliased",)),           # 1/sqrt(d_model) when query is key
]


@pytest.mark.parametrize("component,name,modes", ATTACKS, ids=[a[1] for a in ATTACKS])
def test_a_list_taking_forward_meets_the_layout_modes(component, name, modes):
    res = check(component, f"{HOSTILE}:{name}", examples=10)
    assert res.verdict == "mismatch", res.message
    assert res.detail["mode"] in modes
    assert any("one list" in n for n in res.notes)


@pytest.mark.parametrize("component,name", [("sdpa", "attention"), ("sdpa", "numpy_attention"),
                                            ("mha", "MultiHeadAttention")])
def test_right_list_taking_code_branching_on_layout_or_identity_matches(component, name):
    res = check(component, f"{RIGHT}:{name}", examples=10)
    assert res.verdict == "match", res.message
    assert any("one list" in n for n in res.notes)
