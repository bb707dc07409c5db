"""Weights as frameworks initialise them (core/weight_styles.py): on about half of a check's
examples the drawn weights are restyled as nn.Linear / nn.LayerNorm start them (uniform within
+-1/sqrt(fan_in), gains 1, shifts 0) or with zero biases, so code right only on the oracle's draw
(weights outside a fresh layer's range, gains away from 1) is compared where it is wrong.
"""
from __future__ import annotations

import collections
import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.components import Case, draw_params
from parity_tests.oracle.core.weight_styles import restyled, style_of

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile", "init_tells.py")
RIGHT = os.path.join(candidate_path(), "init_range_paths.py")
SHAPES = {"q_proj.weight": (6, 4), "q_proj.bias": (6,), "norm1.weight": (6,), "norm1.bias": (6,),
          "src_embed.weight": (5, 6), "tgt_embed.weight": (5, 6)}


def _case(seed: int) -> Case:
    params = draw_params(np.random.default_rng(seed), SHAPES, "float64")
    params["tgt_embed.weight"] = params["src_embed.weight"].copy()     # one table for both
    return Case("mha", {"seed": seed}, {}, {}, {}, params, None, (1,))


@pytest.mark.parametrize("component,target", [
    ("mha", "MultiHeadAttention"),                          # 1/sqrt(d_model) within init range
    ("layernorm", "layernorm_forward,layernorm_backward"),  # no centring at gain 1, shift 0
])
def test_code_right_only_on_the_oracles_weight_draw_fails(component, target):
    res = check(component, f"{HOSTILE}:{target}", examples=25, shrink=False)
    assert res.verdict == "mismatch", res.message


@pytest.mark.parametrize("component,target", [
    ("mha", "MultiHeadAttention"), ("layernorm", "layernorm_forward,layernorm_backward")])
def test_right_code_branching_on_its_weights_values_matches(component, target):
    res = check(component, f"{RIGHT}:{target}", examples=25)
    assert res.verdict == "match", res.message


def test_each_style_comes_in_a_share_of_examples_and_a_replay_gets_the_same():
    counts = collections.Counter(style_of(_case(s))[0] for s in range(400))
    assert set(counts) == {"drawn", "init", "zero_bias"}
    assert 150 < counts["drawn"] < 250 and counts["init"] > 60 and counts["zero_bias"] > 60
    a, b = restyled(_case(7), "float64"), restyled(_case(7), "float64")
    assert all(np.array_equal(a.params[n], b.params[n]) for n in SHAPES)


def test_the_init_style_is_a_fresh_layers_and_keeps_tables_and_ties():
    case = next(c for c in map(_case, range(100)) if style_of(c)[0] == "init")
    new = restyled(case, "float64").params
    bound = 4 ** -0.5                                     # 1 / sqrt(fan_in) of q_proj
    assert np.abs(new["q_proj.weight"]).max() <= bound and np.abs(new["q_proj.bias"]).max() <= bound
    assert not np.array_equal(new["q_proj.weight"], case.params["q_proj.weight"])
    assert np.all(new["norm1.weight"] == 1.0) and np.all(new["norm1.bias"] == 0.0)
    assert np.array_equal(new["src_embed.weight"], case.params["src_embed.weight"])
    assert np.array_equal(new["src_embed.weight"], new["tgt_embed.weight"])


def test_the_zero_bias_style_keeps_the_drawn_matrices():
    case = next(c for c in map(_case, range(100)) if style_of(c)[0] == "zero_bias")
    new = restyled(case, "float64").params
    assert np.array_equal(new["q_proj.weight"], case.params["q_proj.weight"])
    assert not new["q_proj.bias"].any() and not new["norm1.bias"].any()
    assert np.all(new["norm1.weight"] == 1.0)
