"""How inputs are handed over: a network calls a multi-head attention with one array as query, key
and value (`mha(x, x, x)`), and an attention's per-head q, k, v are non-contiguous views after a
transpose (so is the upstream gradient autograd hands a custom backward), and a key padding mask
usually comes as (B, 1, 1, Tk). The main run always passed fresh
contiguous arrays, three of them, and masks with every query row spelled out, so code branching on
`query is key`, on the memory layout or on the mask's form took its other path unseen (the hostile
files matched); the `aliased`, `strided` and `broadcast_mask` modes (sandbox/layout_modes.py) run
those paths and the parent compares them with its reference. Right code that branches the same way
still matches.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.components import get
from parity_tests.oracle.core.modes import aliased_case, mode_reference
from parity_tests.oracle.core.report import gradescope_results
from parity_tests.oracle.core.structural import cases
from parity_tests.oracle.reading.findings import Findings

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile")
RIGHT = os.path.join(candidate_path(), "identity_and_layout_paths.py")

ATTACKS = [
    # torch: one object for query, key and value takes a path with the wrong scale
    ("mha", "aliased_fast_path.py:MultiHeadAttention", "output", "aliased"),
    # NumPy: with one object, the backward drops the key's share of the input gradient
    ("mha", "aliased_backward.py:MultiHeadAttention", "grad_input:query", "aliased"),
    # no scale on non-contiguous inputs (torch, NumPy)
    ("sdpa", "layout_branch.py:attention", "output", "strided"),
    ("sdpa", "layout_branch.py:numpy_attention", "output", "strided"),
    # a backward wrong on a non-contiguous upstream gradient (NumPy pair, torch custom Function)
    ("layernorm", "upstream_layout_branch.py:layernorm_forward,layernorm_backward", "grad_input:x",
     "strided"),
    ("layernorm", "upstream_layout_branch.py:LayerNorm", "grad_input:x", "strided"),
    # a key padding mask ignored in its broadcast form (B, 1, 1, Tk)
    ("mha", "broadcast_mask_ignored.py:MultiHeadAttention", "output", "broadcast_mask"),
]


@pytest.mark.parametrize("component,target,quantity,mode", ATTACKS,
                         ids=[a[1].replace(".py:", "-").split(",")[0] for a in ATTACKS])
def test_a_path_taken_on_how_inputs_are_handed_over_is_a_mismatch(component, target, quantity, mode):
    res = check(component, os.path.join(HOSTILE, target), examples=10, score_groups=True)
    assert res.verdict == "mismatch", res.message
    assert res.quantity == quantity
    # a layout branch shows in the relaid mode too (its Fortran order is not C order either)
    assert res.detail["mode"] in ((mode, "relaid") if mode == "strided" else (mode,))
    data = gradescope_results(res)
    assert data["score"] < sum(t["max_score"] for t in data["tests"])


@pytest.mark.parametrize("component,name", [
    ("mha", "PackedSelfPathAttention"),      # a packed q|k|v product when query is key is value
    ("mha", "NumpyAttention"),               # NumPy backward: each argument's own gradient
    ("sdpa", "contiguous_first"),            # .contiguous() then .view
    ("sdpa", "numpy_buffer_attention"),      # np.ascontiguousarray first
    ("layernorm", "contiguous_layernorm_forward,contiguous_layernorm_backward"),   # dout made C-ordered
])
def test_right_code_branching_on_identity_or_layout_matches(component, name):
    res = check(component, f"{RIGHT}:{name}", examples=10)
    assert res.verdict == "match", res.message


def test_the_aliased_reference_sums_the_three_input_gradients():
    comp = get("mha")
    ex = next(e for e in cases(comp, {}, Findings(), 0) if e["Tq"] == e["Tk"])
    same = aliased_case(comp.build(ex, "float64", Findings()))
    assert same.inputs["key"] is same.inputs["query"] and same.inputs["value"] is same.inputs["query"]
    plain = comp.reference(same)
    ref = mode_reference(comp, "aliased", same)
    want = plain["grad_input:query"] + plain["grad_input:key"] + plain["grad_input:value"]
    assert np.allclose(ref["grad_input:query"], want, rtol=0, atol=1e-12)
    assert not np.allclose(want, plain["grad_input:query"])
    assert "grad_input:key" not in ref and "grad_input:value" not in ref
    assert np.array_equal(ref["output"], plain["output"])
