"""A NumPy layer written as a function taking its weights in dicts named for their role with a
holder word (`attn_weights`, `ff_weights = {"w1", "b1", "w2", "b2"}`): the feed-forward is found by
its name, every key placed by name (not by order, which took `b1` for the second weight), and the
layer is compared; a planted bug in the same style still fails."""
from __future__ import annotations

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.part_suffixes import with_holder_words

FILE = candidate_path("dict_weight_layers.py")


@pytest.mark.parametrize("name, verdict", [
    ("dict_encoder_layer", "match"),
    ("dict_encoder_layer_BUG", "mismatch"),
])
def test_weights_in_role_named_dicts_are_placed_by_name(name, verdict):
    res = check("encoder_layer", f"{FILE}:{name}", examples=10)
    assert res.verdict == verdict, render_text(res)
    assert "feed_forward.linear2.weight <- ff_weights.w2 (transposed)" in res.mapping, res.mapping
    assert "feed_forward.linear2.bias <- ff_weights.b2" in res.mapping, res.mapping


def test_holder_word_names_come_before_the_parent_itself():
    assert with_holder_words(("ffn", "ff", "")) == [
        "ffn", "ff", "ffn_weights", "ffn_params", "ffn_parameters", "ffn_weight", "ffn_param",
        "ffn_vars", "ffn_variables", "ff_weights", "ff_params", "ff_parameters", "ff_weight",
        "ff_param", "ff_vars", "ff_variables", ""]
    assert with_holder_words(("net.0",)) == ["net.0"]
