"""Memory layouts, call counts and mask dtypes the main run and the earlier modes never made.

The `strided` mode hands inputs over with their last two axes transposed; code branching on a
negative stride, a stride of 0 (an expanded input, the upstream gradient after `loss = out.sum()`)
or an input starting inside a wider buffer took its other path unseen. The `repeat` mode calls an
instance twice; code wrong from its third call (or keeping a weight copy from its fifth) was never
seen. Masks were handed over in one dtype; code reading 0/1 int masks the other way round matched
though the assignment takes them. The `relaid`, `soak` and `mask_dtype` modes run those paths
(sandbox/layout_modes.py, sandbox/soak.py) and the parent compares them with its reference; right
code branching the same way still matches.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from parity_tests.conftest import candidate_path
from parity_tests.oracle import Options, check
from parity_tests.oracle.components import get
from parity_tests.oracle.core.modes import batch_alike_case, mode_inputs
from parity_tests.oracle.core.structural import cases
from parity_tests.oracle.reading.findings import Findings
from parity_tests.oracle.reading.upstream_layout import upstream, upstream_tensor
from parity_tests.oracle.sandbox.layout_modes import relaid_np
from parity_tests.oracle.sandbox.soak import SOAK_MAX, SOAK_MIN, soak_calls

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile")
RIGHT = os.path.join(candidate_path(), "layout_count_and_mask_paths.py")

ATTACKS = [
    # a layout the strided mode never made: negative strides, stride 0, an offset in a wider buffer
    ("sdpa", "stride_branch.py:numpy_attention", "output", "relaid", {}),
    ("sdpa", "stride_branch.py:expanded_attention", "output", "relaid", {}),
    ("sdpa", "stride_branch.py:offset_attention", "output", "relaid", {}),
    # a backward wrong on an expanded (stride 0) or reversed upstream gradient
    ("layernorm", "stride_branch.py:LayerNorm", "grad_input:x", "relaid", {}),
    ("layernorm", "stride_branch.py:layernorm_forward,layernorm_backward", "grad_input:x", "relaid", {}),
    # wrong from an instance's third call; a weight copy kept from the fifth
    ("mha", "nth_call_switch.py:MultiHeadAttention", None, "soak", {}),    # output or weights
    ("ffn", "nth_call_switch.py:FeedForward", "output", "soak", {}),
    # masks read right in one dtype only, where the assignment takes the other too
    ("mha", "mask_dtype_misread.py:IntMaskMisread", None, "mask_dtype", {"mask_dtypes_also": ("int",)}),
    ("mha", "mask_dtype_misread.py:BoolMaskMisread", None, "mask_dtype",
     {"mask_dtype": "int", "mask_dtypes_also": ("bool",)}),
]


@pytest.mark.parametrize("component,target,quantity,mode,opts", ATTACKS,
                         ids=[a[1].replace(".py:", "-").split(",")[0] for a in ATTACKS])
def test_a_path_taken_on_layout_call_count_or_mask_dtype_fails(component, target, quantity, mode, opts):
    # The soak runs on about half the examples, with a count drawn from the check's secret, so a
    # switch at the 3rd or 5th call is met on about half the examples (3 of 24 checks of 3 examples
    # missed it on the FeedForward): 10 examples missed it once, 25 make a miss about 0.5**25.
    # The other modes run on every example.
    res = check(component, os.path.join(HOSTILE, target), examples=25 if mode == "soak" else 10,
                **opts)
    assert res.verdict in ("mismatch", "non_finite"), res.message
    if quantity is not None:
        assert res.quantity == quantity
    assert res.detail["mode"] == mode


def test_a_mask_dtype_neither_the_assignment_nor_the_code_names_is_not_varied(tmp_path):
    src = open(os.path.join(HOSTILE, "mask_dtype_misread.py"), encoding="utf-8").read()
    silent = tmp_path / "misread.py"          # its docstrings' claims removed (sandbox/mask_claims)
    silent.write_text(src.replace("bool or 0/1 int, ", ""), encoding="utf-8")
    res = check("mha", f"{silent}:IntMaskMisread", examples=10)
    assert res.verdict == "match", res.message
    assert any("masks bool" in n for n in res.notes)


@pytest.mark.parametrize("component,name,opts", [
    ("sdpa", "numpy_attention", {}),                  # copies a reversed or broadcast input
    ("sdpa", "packed_attention", {}),                 # torch: .contiguous() on stride 0 / offset
    ("layernorm", "LayerNorm", {}),                   # custom backward: expanded gradient copied
    ("layernorm", "layernorm_forward,layernorm_backward", {}),
    ("mha", "MultiHeadAttention", {"mask_dtypes_also": ("int", "float")}),   # counts its calls
    ("ffn", "FeedForward", {}),                       # a weight copy refreshed when W1 changes
])
def test_right_code_branching_on_layout_count_or_mask_dtype_matches(component, name, opts):
    res = check(component, f"{RIGHT}:{name}", examples=10, **opts)
    assert res.verdict == "match", res.message


def test_the_soak_count_is_drawn_over_its_whole_range():
    comp = get("mha")
    made = [soak_calls(mode_inputs(comp.build(ex, "float64", Findings()), salt, "float64", "soak"))
            for salt in range(3) for ex in cases(comp, {}, Findings(), salt)]
    soaked = [n for n in made if n]
    assert min(soaked) >= SOAK_MIN and max(soaked) <= SOAK_MAX
    assert len(set(soaked)) >= 4 and 0.2 < len(soaked) / len(made) < 0.8


def test_the_relaid_example_repeats_its_batch_row_where_masks_allow():
    comp = get("mha")
    built = {ex["mask"]["kind"]: comp.build(ex, "float64", Findings())
             for ex in cases(comp, {}, Findings(), 0) if ex["B"] > 1}
    case = built["causal"]                 # alike in every batch row: repeated
    alike = batch_alike_case(case)
    assert alike.dout.shape == case.dout.shape and np.array_equal(alike.dout[1], alike.dout[0])
    assert np.array_equal(alike.inputs["query"][-1], case.inputs["query"][0])
    assert not np.array_equal(case.dout[1], case.dout[0])
    padded = built["padding"]              # a padding that differs per row: left as drawn
    assert batch_alike_case(padded) is padded


def test_layouts_keep_values_and_the_upstream_gradient_keeps_its_strides():
    a = np.arange(24.0).reshape(2, 3, 4)
    for how in ("fortran", "reversed", "wide"):
        v = relaid_np(a, how)
        assert np.array_equal(v, a) and not v.flags.writeable and not v.flags.c_contiguous
    assert relaid_np(a, "broadcast") is None
    b = relaid_np(np.repeat(a[:1], 2, axis=0), "broadcast")
    assert b.strides[0] == 0
    assert upstream(b, "float64") is b                     # a NumPy backward gets it as it is
    g = upstream_tensor(torch, b, "float64")
    assert g.stride()[0] == 0 and torch.equal(g, torch.from_numpy(np.array(b)))


def test_an_unknown_mask_dtype_is_refused_by_name():
    with pytest.raises(ValueError, match="--also-mask-dtype"):
        Options(mask_dtypes_also=("half",)).validate()
