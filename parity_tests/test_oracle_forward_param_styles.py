"""Reach: forward and parameter styles. Each right candidate reaches "match" from
the plain command (plus only what its code makes obvious), its wrong twin "mismatch"; weights the
oracle cannot find are interface errors naming them, never silently absent."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check  # noqa: E402
from parity_tests.oracle.core.report import render_text  # noqa: E402

HERE = candidate_path()
TORCH = os.path.join(HERE, "torch_styles.py")
NUMPY = os.path.join(HERE, "numpy_styles.py")
N = 5
NO_BIAS = {f"{p}.bias": "-" for p in ("q_proj", "k_proj", "v_proj", "out_proj")}

PAIRS = [
    # id, component, file, right, wrong, options, a note the report must carry
    ("bh_valid_lens", "sdpa", TORCH, "DotProductAttention", "DotProductAttentionUnscaled", {},
     "(batch*heads, T, d)"),
    ("lazy_valid_lens", "mha", TORCH, "LazyMultiHeadAttention", "LazyMultiHeadAttentionNoPermute", {},
     "created lazily"),
    ("per_head_modules", "mha", TORCH, "HeadsAttention", "HeadsAttentionBadScale", {},
     "self-attention"),
    ("list_input", "mha", TORCH, "ListInputAttention", "ListInputAttentionSwapped", {}, "one list"),
    ("pe_table", "positional", TORCH, "PositionalTable", "PositionalTableSwapped", {},
     "positional table"),
    ("pe_table_numpy", "positional", NUMPY, "SinusoidTable", "SinusoidTableOffByOne", {},
     "positional table"),
    ("inner_norm", "encoder_layer", TORCH, "NormedEncoderLayer", "NormedEncoderLayerBad", {}, "d_k"),
    ("encoder_block_valid_lens", "encoder_layer", TORCH, "TransformerEncoderBlock",
     "TransformerEncoderBlockBad", {}, "causal draws skipped"),
    ("conv1d_ffn", "ffn", TORCH, "ConvFeedForward", "ConvFeedForwardNoAct", {}, None),
    ("row_bias", "ffn", NUMPY, "RowBiasFFN", "RowBiasFFNBadGrad", {"weight_layout": "in_out"}, None),
    ("per_head_lists", "mha", NUMPY, "ListHeadsMHA", "ListHeadsMHAReversed",
     {"weight_layout": "in_out", "name_map": NO_BIAS}, None),
    ("per_head_lists_with_bias", "mha", NUMPY, "ListHeadsMHAWithBias", "ListHeadsMHAWithBiasBad",
     {"weight_layout": "in_out"}, None),
    ("hidden_gain_mapped", "layernorm", NUMPY, "HiddenGainLayerNorm", "HiddenGainLayerNormBad",
     {"name_map": {"weight": "p.gain", "bias": "p.shift"}}, None),
]


@pytest.mark.parametrize("component,file,right,wrong,opts,note", [p[1:] for p in PAIRS],
                         ids=[p[0] for p in PAIRS])
def test_style_right_matches_wrong_mismatches(component, file, right, wrong, opts, note):
    res = check(component, f"{file}:{right}", examples=N, **opts)
    assert res.verdict == "match", render_text(res)
    if note:
        assert any(note in n for n in res.notes), res.notes
    bad = check(component, f"{file}:{wrong}", examples=30, **opts)
    assert bad.verdict == "mismatch", render_text(bad)


def test_valid_lens_skips_causal_draws_and_says_so():
    res = check("sdpa", f"{TORCH}:DotProductAttention", examples=N)
    assert any("causal draws skipped" in n for n in res.notes), res.notes


def test_biasless_torch_linear_is_absent_with_a_reason():
    res = check("mha", f"{TORCH}:HeadsAttention", examples=N)
    absent = [m for m in res.mapping if m.startswith("q_proj.bias")]
    assert absent and "no parameter or buffer" in absent[0], res.mapping
    per_head = [m for m in res.mapping if m.startswith("q_proj.weight")]
    assert "per-head pieces" in per_head[0], res.mapping


def test_inner_norm_mapped_inside_the_blocks():
    res = check("encoder_layer", f"{TORCH}:NormedEncoderLayer", examples=N)
    norms = [m for m in res.mapping if m.startswith("norm")]
    assert norms and all("inside the sublayer block" in m for m in norms), res.mapping


def test_block_with_inner_norm_alone_is_an_interface_error_with_a_hint():
    res = check("mha", f"{TORCH}:NormedMultiHeadAttention", examples=N)
    assert res.verdict == "interface_error", render_text(res)
    assert "layer_norm" in res.message and "encoder_layer" in res.message


def test_numpy_weight_not_found_is_an_interface_error_naming_it():
    res = check("layernorm", f"{NUMPY}:HiddenGainLayerNormBad", examples=N)
    assert res.verdict == "interface_error", render_text(res)
    assert "weight" in res.message and "--map REF=-" in res.message


def test_numpy_biases_are_absent_only_when_nothing_the_object_holds_could_be_them():
    # a walk of everything ListHeadsMHA holds finds its matrices only: its biases are absent (not
    # compared, said so); a bias kept under a private name stays an interface error
    # (test_oracle_numpy_biasless.py)
    res = check("mha", f"{NUMPY}:ListHeadsMHA", examples=N, weight_layout="in_out")
    assert res.verdict == "match", render_text(res)
    assert "has no such parameter" in res.not_checked["grad_param:q_proj.bias"]


def test_random_unmapped_numpy_array_is_an_interface_error_not_nondeterministic():
    res = check("ffn", f"{NUMPY}:GatedFFN", examples=N, weight_layout="in_out")
    assert res.verdict == "interface_error", render_text(res)
    assert "gate" in res.message and "(1, " in res.message


def test_numpy_lazy_weights_materialised():
    res = check("ffn", f"{NUMPY}:LazyFFN", examples=N)
    assert res.verdict == "match", render_text(res)
    assert any("created lazily" in n for n in res.notes), res.notes


def test_self_attention_with_lengths_reorders_positions():
    res = check("mha", f"{TORCH}:SelfAttentionValidLens", examples=12)
    assert res.verdict == "match", render_text(res)
    assert any("self-attention" in n for n in res.notes) and \
        any("causal draws skipped" in n for n in res.notes), res.notes


def _left_padded(B, Tq, Tk):
    """Keep mask (B, 1, Tq, Tk) as 0/1 lists: batch 0 keeps only its LAST key, the others all keys."""
    rows = [[0] * (Tk - 1) + [1]] + [[1] * Tk for _ in range(B - 1)]
    return {"kind": "padding", "keep": [[[r] * Tq] for r in rows]}


REPLAYS = [
    ("sdpa", "DotProductAttention", {"B": 2, "H": 2, "Tq": 3, "Tk": 4, "dk": 3, "dv": 2}),
    ("mha", "LazyMultiHeadAttention", {"B": 2, "Tq": 3, "Tk": 4, "d_model": 4, "num_heads": 2}),
    ("mha", "SelfAttentionValidLens", {"B": 2, "Tq": 4, "Tk": 4, "d_model": 4, "num_heads": 2}),
    ("encoder_layer", "TransformerEncoderBlock",
     {"B": 2, "T": 4, "d_model": 4, "num_heads": 2, "d_ff": 3, "activation": "relu", "eps": 1e-5,
      "norm_first": False}),
]


@pytest.mark.parametrize("component,name,sizes", REPLAYS, ids=[r[1] for r in REPLAYS])
def test_lengths_reach_left_padded_masks(component, name, sizes):
    """A padding that keeps the last key cannot be said with lengths as it is: the oracle reorders
    the keys (and, for self-attention, the positions) and still compares exactly."""
    Tq, Tk = sizes.get("Tq", sizes.get("T")), sizes.get("Tk", sizes.get("T"))
    example = {**sizes, "mask": _left_padded(sizes["B"], Tq, Tk), "seed": 3}
    res = check(component, f"{TORCH}:{name}", replay=example)
    assert res.verdict == "match", render_text(res)
    assert "grad_input" in " ".join(res.checked), res.checked


def test_per_head_bias_lists_are_mapped():
    res = check("mha", f"{NUMPY}:ListHeadsMHAWithBias", examples=3, weight_layout="in_out")
    line = next(m for m in res.mapping if m.startswith("v_proj.bias"))
    assert "per-head pieces bv.0" in line, res.mapping
