"""Parameters named in the plural or by role with a suffix are placed by their words: a norm's
`weights` / `biases` (the plural of its leaves), an attention's `key_bias` / `value_bias` /
`final_linear_bias` beside `key_weights` / `value_weights` / `final_linear_weights` (the bias
sharing the weight's role). Before, both were INTERFACE_ERROR asking for `--map`. Planted bugs (a
shift subtracted, the key's bias added to the values): MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "role_suffixed_names.py"


def test_a_norm_holding_weights_and_biases_matches(candidate_file):
    res = check("layernorm", f"{candidate_file(FILE)}:PluralLayerNorm", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_norm_subtracting_its_biases_is_a_mismatch(candidate_file):
    res = check("layernorm", f"{candidate_file(FILE)}:PluralLayerNormBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_role_named_biases_are_placed_beside_their_weights(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:RoleNamedAttention", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "NOT COMPARED (biases)" not in text, text


def test_a_bias_added_to_the_wrong_role_is_a_mismatch(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:RoleNamedAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_leaf_words_read_plurals_and_roles():
    from parity_tests.oracle.reading.leaf_words import role_biases, role_of, with_plurals
    assert with_plurals(["weight", "bias", "g", "0"]) == ["weight", "bias", "g", "0", "weights", "biases"]
    assert role_of("final_linear_weights") == "final_linear" and role_of("weights_first") == "first"
    assert role_of("weights") is None and role_of("query_vector") is None
    assert "key_bias" in role_biases("key_weights") and "biases_second" in role_biases("weights_second")
