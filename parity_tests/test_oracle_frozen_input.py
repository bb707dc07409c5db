"""Parameter gradients with inputs that need none (sandbox/frozen_input.py): every main run's
inputs required gradients, so a backward wrong only when some do not (a network's first layer on
its raw data, a cross-attention over a frozen memory) matched. The `frozen_input` mode runs a torch
candidate's forward and backward with all its inputs, or all but the first, detached and compares
the output and every gradient left; right code that branches on it matches.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "frozen_input_grads.py")
RIGHT = os.path.join(candidate_path(), "frozen_input_paths.py")


@pytest.mark.parametrize("component,name,quantity", [
    ("layernorm", "LayerNorm", "grad_param:weight"),     # every input detached
    ("sdpa", "attention", "grad_input:q"),                # keys and values detached, q not
])
def test_a_gradient_wrong_for_a_frozen_input_fails(component, name, quantity):
    res = check(component, f"{HOSTILE}:{name}", examples=10)
    assert res.verdict == "mismatch", res.message
    assert res.quantity == quantity
    assert res.detail["mode"] == "frozen_input"


@pytest.mark.parametrize("component,name", [("layernorm", "LayerNorm"),
                                            ("layernorm", "BranchingLayerNorm"), ("sdpa", "attention")])
def test_right_code_branching_on_a_frozen_input_matches(component, name):
    res = check(component, f"{RIGHT}:{name}", examples=10)
    assert res.verdict == "match", res.message
