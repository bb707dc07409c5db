"""Multi-head attention whose constructor takes a width for each of its inputs, query, key and
value (`query_dim, key_dim, value_dim`, `query_embed_dim, ...`): each is passed d_model, the
feature size the oracle draws its inputs at (recognise/derived.input_widths). One or two such
names (Keras' `key_dim` beside `num_heads`) are not read so. Planted bugs stay MISMATCH."""
from __future__ import annotations

import inspect

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.derived import input_widths  # noqa: E402


@pytest.fixture
def widths(candidate_file):
    return candidate_file("input_width_constructors.py")


@pytest.mark.parametrize("name", ["InputWidthAttention", "EmbedWidthAttention"])
def test_attention_taking_each_input_width_matches(widths, name):
    res = check("mha", f"{widths}:{name}", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "one of the query, key and value widths, passed d_model" in text


@pytest.mark.parametrize("name", ["InputWidthAttentionBUG", "EmbedWidthAttentionBUG"])
def test_a_planted_bug_beside_those_widths_is_a_mismatch(widths, name):
    res = check("mha", f"{widths}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def _params(text):
    ns: dict = {}
    exec(f"def f({text}): pass", ns)
    return list(inspect.signature(ns["f"]).parameters.values())


@pytest.mark.parametrize("sig, found", [
    ("query_dim, key_dim, value_dim, embed_dim, num_heads", ["query_dim", "key_dim", "value_dim"]),
    ("query_embed_dim, key_embed_dim, value_embed_dim, attention_embed_dim=256",
     ["query_embed_dim", "key_embed_dim", "value_embed_dim"]),
    ("num_heads, key_dim, value_dim=None", []),             # Keras: a head's width
    ("d_model, n_head, d_q, d_k, d_v", []),                 # head widths by letter
    ("query_dim, key_dim, value_dim=None, heads=1", ["query_dim", "key_dim"]),   # optional kept
    ("query_size, key_size, value_size, num_hiddens", []),  # d2l's: derived.value passes them
])
def test_only_a_width_for_each_of_query_key_and_value_is_read_so(sig, found):
    assert [p.name for p in input_widths(_params(sig))] == found
