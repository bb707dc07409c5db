"""Biases named by number only (`bias1`, `bias2`) beside kernels whose names end in the same number
(`kern_c1`, `kern_c2`): each bias pairs with the same-numbered matrix when the shapes fit
(resolve_fallbacks._named_bias). Before, the layer was an interface error, "cannot tell where the candidate
keeps feed_forward.linear1.bias". Biases kept as rows (`biases1 = np.zeros((1, d_ff))` beside
`weights1`) pair with their matrix as vectors do; before, they were left unplaced (an interface
error), and at d_ff = 1 the (1, d) row beside a (1, d) matrix read as a gated unit. Planted bugs
stay MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading import resolve_fallbacks


@pytest.fixture
def layers(candidate_file):
    return candidate_file("numbered_bias_layers.py")


def test_an_encoder_layer_with_numbered_feed_forward_biases_matches(layers):
    res = check("encoder_layer", f"{layers}:NumberedBiasEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any(str(m).startswith("feed_forward.linear1.bias <- conv.bias1") for m in res.mapping), res.mapping


def test_a_planted_bias_after_the_activation_is_a_mismatch(layers):
    res = check("encoder_layer", f"{layers}:NumberedBiasEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_number_pairs_only_with_its_own_number():
    named = resolve_fallbacks._named_bias
    vecs = ["ff.bias1", "ff.bias2", "ff.bias12", "other.bias1"]
    assert named("ff.kern_c1", vecs) == ["ff.bias1"]
    assert named("ff.kern_c2", vecs) == ["ff.bias2"]
    assert named("ff.kern_c3", vecs) == []


@pytest.mark.parametrize("component,name", [("ffn", "RowBiasFeedForward"),
                                            ("encoder_layer", "RowBiasEncoderLayer")])
def test_row_biases_beside_their_matrices_match(layers, component, name):
    res = check(component, f"{layers}:{name}", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("bias <- " in str(m) and "biases" in str(m) for m in res.mapping), res.mapping


@pytest.mark.parametrize("component,name", [("ffn", "RowBiasFeedForwardBUG"),
                                            ("encoder_layer", "RowBiasEncoderLayerBUG")])
def test_a_planted_bias_before_the_second_matrix_is_a_mismatch(layers, component, name):
    res = check(component, f"{layers}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
