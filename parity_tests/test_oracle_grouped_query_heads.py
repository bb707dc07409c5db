"""Grouped-query attention's key/value head count (`kv_heads`, `num_kv_heads`,
`num_key_value_heads`) is given num_heads, said in a note: with as many key/value heads as query
heads it is multi-head attention. Before, the constructor could not be called ("parameter
'kv_heads' is required, but the oracle has nothing left to pass"). Planted bug: MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "grouped_query_attention.py"


def test_a_key_value_head_count_gets_the_head_count(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:GroupedQueryAttention", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "constructor argument 'kv_heads': passed num_heads" in text, text


def test_the_planted_bug_in_grouped_query_attention_is_a_mismatch(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:GroupedQueryAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
