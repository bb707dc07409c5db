"""Widths spelled out in full words (`embedding_dimension`, `input_dimension` /
`output_dimension`, `number_of_heads`, `length_sentence_max` / `dimension`), also as the fields of
a dataclass config the layer reads through its own `to_dict()`: each takes the hyperparameter it
names, never another by position. Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.naming import names_hyper  # noqa: E402


@pytest.fixture
def spelled(candidate_file):
    return candidate_file("spelled_out_widths.py")


def test_a_feed_forward_sized_by_its_embedding_dimension_matches(spelled):
    res = check("ffn", f"{spelled}:SpelledFeedForward", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_that_feed_forward_is_a_mismatch(spelled):
    res = check("ffn", f"{spelled}:SpelledFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_attention_with_input_and_output_dimensions_matches(spelled):
    res = check("mha", f"{spelled}:SpelledAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "'output_dimension': passed d_model" in render_text(res)


def test_a_planted_scale_in_that_attention_is_a_mismatch(spelled):
    res = check("mha", f"{spelled}:SpelledAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_layer_built_from_a_dataclass_with_spelled_fields_matches(spelled):
    res = check("encoder_layer", f"{spelled}:SpelledEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_that_layer_is_a_mismatch(spelled):
    res = check("encoder_layer", f"{spelled}:SpelledEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_table_sized_by_length_and_dimension_matches(spelled):
    res = check("positional", f"{spelled}:SpelledPositionalTable", examples=10)
    assert res.verdict == "match", render_text(res)


def test_spelled_names_are_read_by_their_words():
    assert names_hyper("d_model", "embedding_dimension") and names_hyper("d_model", "dimension")
    assert names_hyper("d_model", "input_dimension")
    assert not names_hyper("d_model", "feed_forward_dimension")
    assert not names_hyper("d_model", "number_of_embeddings")
    assert names_hyper("num_heads", "number_of_heads")
    assert names_hyper("max_len", "length_sentence_max") and not names_hyper("max_len", "dimension")
