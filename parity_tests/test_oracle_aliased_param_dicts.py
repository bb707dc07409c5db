"""NumPy parts keeping each weight both as an attribute and in a `params` dict (the same array),
with gradients in a `grads` dict: one weight is one parameter (not a gated feed-forward's second
matrix), a dtype change reaches both names, and a `grads` dict is no hiding place for a bias.
Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def aliased(candidate_file):
    return candidate_file("aliased_param_dicts.py")


def test_biasless_attention_with_a_grads_dict_matches_in_float32(aliased):
    res = check("mha", f"{aliased}:AliasedAttention", examples=10, dtype="float32")
    assert res.verdict == "match", render_text(res)


def test_a_planted_missing_scale_is_a_mismatch(aliased):
    res = check("mha", f"{aliased}:AliasedAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_layer_of_parts_with_aliased_params_matches(aliased):
    res = check("encoder_layer", f"{aliased}:AliasedEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_planted_norm_order_in_that_layer_is_a_mismatch(aliased):
    res = check("encoder_layer", f"{aliased}:AliasedEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
