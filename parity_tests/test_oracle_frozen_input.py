"""Parameter gradients with inputs that need none (sandbox/frozen_input.py): every main run's
inputs required gradients, so a backward wrong only when they do not (a network's first layer on
its raw data, a layer after a frozen one) matched. The `frozen_input` mode runs a torch candidate's
forward and backward with its inputs detached and compares the output and every parameter
gradient; right code that branches on it matches.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "frozen_input_grads.py")
RIGHT = os.path.join(candidate_path(), "frozen_input_paths.py")


def test_a_gain_gradient_wrong_for_a_frozen_input_fails():
    res = check("layernorm", f"{HOSTILE}:LayerNorm", examples=10)
    assert res.verdict == "mismatch", res.message
    assert res.quantity == "grad_param:weight"
    assert res.detail["mode"] == "frozen_input"


@pytest.mark.parametrize("name", ["LayerNorm", "BranchingLayerNorm"])
def test_right_code_branching_on_a_frozen_input_matches(name):
    res = check("layernorm", f"{RIGHT}:{name}", examples=10)
    assert res.verdict == "match", res.message
