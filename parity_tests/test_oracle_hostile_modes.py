"""Paths the main run never takes: every example is also run, in the worker, without autograd
(torch.no_grad(), inputs not requiring gradients), in train() mode with dropout 0, and for a NumPy
backward with another example's forward and backward in between (sandbox/modes.py); a quantity
that matched the reference must come out the same there (core/modes.py). Each hostile file got
`match` and full marks before; correct code of every style still matches (the candidate tests, and
the ones here that take the fused inference kernels and per-instance caches).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.components import get
from parity_tests.oracle.core.backend import validate_run
from parity_tests.oracle.core.report import gradescope_results
from parity_tests.oracle.core.structural import cases
from parity_tests.oracle.reading.findings import Findings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
CANDS = candidate_path()

ATTACKS = [
    ("sdpa", "inference_path.py:attention", "output", "nograd", "torch.no_grad()"),
    ("ffn", "dropout_own_rate.py:PositionwiseFeedForward", "output", "train", "train() mode"),
    ("layernorm", "backward_global_state.py:layernorm_forward", "grad_input:x", "decoy",
     "another example's forward and backward"),
]


@pytest.mark.parametrize("component,target,quantity,mode,words", ATTACKS,
                         ids=[a[1].split(".")[0] for a in ATTACKS])
def test_a_path_only_another_mode_takes_is_a_mismatch(component, target, quantity, mode, words):
    res = check(component, os.path.join(HOSTILE, target), examples=10, score_groups=True)
    assert res.verdict == "mismatch", res.message
    assert res.quantity == quantity
    assert res.detail["mode"] == mode
    assert words in res.message
    data = gradescope_results(res)
    assert data["score"] < sum(t["max_score"] for t in data["tests"])


@pytest.mark.parametrize("target,mode,words", [
    # the no_grad path of inference_path, its outputs remembered by input bytes: the modes ran on
    # the main run's inputs and got the remembered answers back; they now run on inputs of their own
    ("remembers_inputs.py:attention", "nograd", "torch.no_grad()"),
    # a path taken only under torch.inference_mode(): a few examples run under it at the end
    ("inference_mode_path.py:attention", "inference", "torch.inference_mode()"),
    # wrong without autograd unless the call before had it on (the order of one example's runs)
    ("inference_after_autograd.py:attention", "inference", "torch.inference_mode()"),
    # inference_mode_path's answers remembered by input bytes outside inference mode: the runs under
    # inference mode replayed the other modes' inputs; they now draw inputs of their own
    ("remembers_for_inference.py:attention", "inference", "torch.inference_mode()"),
    # functional_dropout_own_rate's training path given back the no_grad run's remembered answer:
    # every mode ran on the same inputs; each now draws its own
    ("remembers_across_modes.py:attention", "train", "train() mode"),
], ids=["remembers_inputs", "inference_mode_path", "inference_after_autograd",
        "remembers_for_inference", "remembers_across_modes"])
def test_an_inference_path_hidden_from_the_modes_is_a_mismatch(target, mode, words):
    res = check("sdpa", os.path.join(HOSTILE, target), examples=5)
    assert res.verdict == "mismatch", res.message
    assert (res.quantity, res.detail["mode"]) == ("output", mode)
    assert words in res.message


RIGHT = [
    ("sdpa", "torch_attention.py:attention", {}),                         # torch function
    ("ffn", "torch_layers.py:PositionwiseFeedForward", {}),               # nn.Dropout(given rate)
    ("ffn", "numpy_candidates.py:FeedForward", {"weight_layout": "in_out"}),  # cache on self
    ("layernorm", "numpy_candidates.py:layernorm_forward", {}),           # pair, cache passed
    ("mha", "tutorial_styles/torch_library_style.py:Attention", {}),      # nn.MultiheadAttention
    ("encoder_layer", "tutorial_styles/torch_library_style.py:EncoderLayer", {}),
]


@pytest.mark.parametrize("component,target,opts", RIGHT, ids=[r[1] for r in RIGHT])
def test_right_code_is_the_same_in_every_mode(component, target, opts):
    res = check(component, os.path.join(CANDS, target), examples=8, **opts)
    assert res.verdict == "match", res.message


@pytest.mark.parametrize("layer", ["MultiheadAttention", "TransformerEncoderLayer"])
def test_torch_fused_inference_kernels_differ_in_rounding_only(layer):
    """Without autograd, in eval(), torch's own layers take a fused kernel that rounds differently
    (measured: 1e-16 to 6e-16 in float64, 1e-7 to 2e-7 in float32): the modes are compared within
    the reference tolerance, never bit for bit, so these correct layers match."""
    import torch

    from parity_tests.oracle.core.backend import Reply
    from parity_tests.oracle.core.modes import mode_difference
    torch.manual_seed(0)
    if layer == "MultiheadAttention":
        m = torch.nn.MultiheadAttention(8, 2, batch_first=True).double().eval()
        f = lambda: m(x, x, x, need_weights=False)[0]  # noqa: E731
    else:
        m = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True).double().eval()
        f = lambda: m(x)  # noqa: E731
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    with torch.no_grad():
        fused = f().numpy()
    slow = f().detach().numpy()
    assert not np.array_equal(fused, slow)          # bit equality would fail this right layer
    _, case = _case()
    rep = Reply(values={"output": slow}, modes={"nograd": {"output": fused}})
    case.row_keep = None
    assert mode_difference(rep, "output", "output", "output", case, "float64") is None
    rep.modes["nograd"]["output"] = fused + 1e-6
    assert mode_difference(rep, "output", "output", "output", case, "float64")[0] == "nograd"


def _case():
    comp = get("sdpa")
    ex = cases(comp, {}, Findings(), 0)[0]
    return comp, comp.build(ex, "float64", Findings())


def test_a_reply_without_the_no_grad_run_asked_for_is_not_believed():
    comp, case = _case()
    out = np.zeros(case.out_shape)
    rep = validate_run({"status": "ok"}, {"value:output": out}, case, comp, 1, None, ("nograd",))
    assert getattr(rep, "verdict", None) == "crashed"
    ok = validate_run({"status": "ok"}, {"value:output": out, "nograd:output": out}, case, comp,
                      1, None, ("nograd",))
    assert ok.modes["nograd"]["output"] is not None


def test_a_mode_not_asked_for_is_refused():
    comp, case = _case()
    out = np.zeros(case.out_shape)
    rep = validate_run({"status": "ok"}, {"value:output": out, "train:output": out}, case, comp,
                       1, None, ("nograd",))
    assert getattr(rep, "verdict", None) == "wrong_type"
