"""A NumPy layer written as a function taking its weights in dicts named for their role with a
holder word (`attn_weights`, `ff_weights = {"w1", "b1", "w2", "b2"}`): the feed-forward is found by
its name, every key placed by name (not by order, which took `b1` for the second weight), and the
layer is compared; under a name nothing reads (`pointwise`), the by-order fallback skips the keys
named as biases when placing weights; a planted bug in the same style still fails."""
from __future__ import annotations

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.bias_names import named_as_bias
from parity_tests.oracle.reading.part_suffixes import with_holder_words

FILE = candidate_path("dict_weight_layers.py")


@pytest.mark.parametrize("name, verdict, part", [
    ("dict_encoder_layer", "match", "ff_weights"),
    ("dict_encoder_layer_BUG", "mismatch", "ff_weights"),
    ("unnamed_dict_encoder_layer", "match", "pointwise"),
    ("unnamed_dict_encoder_layer_BUG", "mismatch", "pointwise"),
])
def test_weights_in_dicts_are_placed_weights_as_weights(name, verdict, part):
    res = check("encoder_layer", f"{FILE}:{name}", examples=10)
    assert res.verdict == verdict, render_text(res)
    placed = {m.split(" <- ")[0]: m.split(" <- ")[1].split(" ")[0] for m in res.mapping}
    assert placed["feed_forward.linear2.weight"] == f"{part}.w2", res.mapping
    assert placed["feed_forward.linear2.bias"] == f"{part}.b2", res.mapping


def test_names_saying_bias():
    for name in ("b1", "ff.b_2", "bias1", "b_ff", "ffn_bias", "biases", "b"):
        assert named_as_bias(name), name
    for name in ("w1", "ff.W_2", "weight", "emb", "wb1", "kernel"):
        assert not named_as_bias(name), name


def test_holder_word_names_come_before_the_parent_itself():
    assert with_holder_words(("ffn", "ff", "")) == [
        "ffn", "ff", "ffn_weights", "ffn_params", "ffn_parameters", "ffn_weight", "ffn_param",
        "ffn_vars", "ffn_variables", "ff_weights", "ff_params", "ff_parameters", "ff_weight",
        "ff_param", "ff_vars", "ff_variables", ""]
    assert with_holder_words(("net.0",)) == ["net.0"]
