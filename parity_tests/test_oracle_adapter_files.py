"""--adapter FILE: hooks to build, call and read a candidate guessing cannot reach.
The same adapter file serves a right candidate (match) and its wrong twin (mismatch)."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import Options, check  # noqa: E402
from parity_tests.oracle.core.report import render_text  # noqa: E402

HERE = candidate_path()
FILE = os.path.join(HERE, "hooked_styles.py")
TORCH_ADAPTER = os.path.join(HERE, "hooked_adapter_torch.py")
NUMPY_ADAPTER = os.path.join(HERE, "hooked_adapter_numpy.py")


@pytest.mark.parametrize("component,right,wrong,adapter,opts", [
    ("mha", "DictBatchAttention", "DictBatchAttentionBad", TORCH_ADAPTER, {"weight_layout": "in_out"}),
    ("layernorm", "TupleStateNorm", "TupleStateNormBad", NUMPY_ADAPTER, {}),
], ids=["torch", "numpy"])
def test_adapter_hooks_right_and_wrong(component, right, wrong, adapter, opts):
    res = check(component, f"{FILE}:{right}", examples=5, adapter_path=adapter, **opts)
    assert res.verdict == "match", render_text(res)
    assert any("the adapter's weights()" in m for m in res.mapping) or component != "mha"
    assert any(n.startswith("adapter file hooked_adapter") for n in res.notes), res.notes
    bad = check(component, f"{FILE}:{wrong}", examples=30, adapter_path=adapter, **opts)
    assert bad.verdict == "mismatch", render_text(bad)


def test_numpy_adapter_checks_gradients():
    bad = check("layernorm", f"{FILE}:TupleStateNormBad", examples=30, adapter_path=NUMPY_ADAPTER, shrink=False)
    assert bad.verdict == "mismatch" and bad.quantity == "grad_param:weight", render_text(bad)


def test_without_the_adapter_the_candidate_is_not_reached():
    res = check("mha", f"{FILE}:DictBatchAttention", examples=3, shrink=False)
    assert res.verdict != "match"


def test_adapter_that_forgets_a_weight_is_an_interface_error(tmp_path):
    f = tmp_path / "partial.py"
    f.write_text("def build(component, hyper, candidate):\n"
                 "    return candidate(hyper['d_model'])\n"
                 "def call(obj, inputs):\n    return obj.run(inputs['x'])\n"
                 "def weights(obj):\n    return {'weight': obj.state[0]}\n")
    res = check("layernorm", f"{FILE}:TupleStateNorm", examples=3, adapter_path=str(f))
    assert res.verdict == "interface_error" and "bias" in res.message, render_text(res)


def test_bad_adapter_files_are_clear_errors(tmp_path):
    f = tmp_path / "wrong_arity.py"
    f.write_text("def call(obj):\n    return obj\n")
    res = check("layernorm", f"{FILE}:TupleStateNorm", examples=3, adapter_path=str(f))
    assert res.verdict == "interface_error" and "call must take 2 argument" in res.message
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    res = check("layernorm", f"{FILE}:TupleStateNorm", examples=3, adapter_path=str(empty))
    assert res.verdict == "interface_error" and "defines none of the hooks" in res.message
    with pytest.raises(ValueError, match="--adapter"):
        Options(adapter_path="adapter.txt").validate()


def test_function_with_only_a_call_hook(tmp_path):
    f = tmp_path / "adapter.py"
    f.write_text("def call(fn, inputs):\n"
                 "    return fn((inputs['q'], inputs['k']), inputs['v'], inputs['mask'])\n")
    res = check("sdpa", f"{FILE}:pair_attention", examples=5, adapter_path=str(f))
    assert res.verdict == "match", render_text(res)
    bad = check("sdpa", f"{FILE}:pair_attention_bad", examples=30, adapter_path=str(f), shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)


def test_build_only_hook_for_a_whole_layer(tmp_path):
    f = tmp_path / "adapter.py"
    f.write_text("from constructor_styles import MultiHeadAttention, PositionwiseFeedForward\n"
                 "def build(component, hyper, candidate):\n"
                 "    d = hyper['d_model']\n"
                 "    return candidate(d, MultiHeadAttention(d, hyper['num_heads']),\n"
                 "                     PositionwiseFeedForward(d, hyper['d_ff'], 0.0), 0.0)\n")
    layers = os.path.join(HERE, "constructor_styles.py")
    res = check("encoder_layer", f"{layers}:EncoderLayer", examples=5, adapter_path=str(f))
    assert res.verdict == "match", render_text(res)
    bad = check("encoder_layer", f"{layers}:EncoderLayerNoResidual", examples=30, adapter_path=str(f), shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)
