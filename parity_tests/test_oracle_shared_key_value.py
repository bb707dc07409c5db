"""Attention taking key and value as one argument (`forward(x, kv, mask)`): checked as
MultiHead(q, kv, kv) with the query and the key/value tensor drawn apart, the gradient of the one
argument compared with dk + dv; the report says keys and values were never drawn apart. Before, the
oracle had nothing to pass for `kv` (an interface error). Also: heads counted under a name no alias
lists (`number_of_heads`, `n_attention_heads`) are num_heads. Planted bugs stay MISMATCH."""
from __future__ import annotations

import inspect

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.naming import names_num_heads  # noqa: E402
from parity_tests.oracle.reading.recognise.shared_kv import kv_argument  # noqa: E402


@pytest.fixture
def kv(candidate_file):
    return candidate_file("shared_key_value.py")


@pytest.mark.parametrize("name", ["KeyValueArgumentAttention", "CountedHeadsKeyAndValueAttention"])
def test_attention_taking_key_and_value_as_one_argument_matches(kv, name):
    res = check("mha", f"{kv}:{name}", examples=15)
    assert res.verdict == "match", render_text(res)
    assert "grad_input:key_value" in res.checked, res.checked
    assert any("key and value as one argument" in n for n in res.notes), res.notes


def test_values_projected_from_the_query_are_a_mismatch(kv):
    res = check("mha", f"{kv}:KeyValueArgumentAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_the_key_value_argument_is_found_by_its_name():
    def sig(f):
        return inspect.signature(f)
    assert kv_argument(sig(lambda self, x, kv, mask=None: 0)) == "kv"
    assert kv_argument(sig(lambda self, query_tokens, key_or_value_tokens, mask=None: 0)) == \
        "key_or_value_tokens"
    assert kv_argument(sig(lambda self, q, k, v, mask=None: 0)) is None
    assert kv_argument(sig(lambda self, q, kv, value: 0)) is None      # a value of its own too
    assert kv_argument(sig(lambda self, x, mask=None, kv_cache=None: 0)) is None
    assert kv_argument(sig(lambda self, x, past_key_values=None: 0)) is None


def test_heads_counted_in_other_words_are_num_heads():
    assert names_num_heads("n_attention_heads") and names_num_heads("number_of_heads")
    assert not names_num_heads("heads_dim") and not names_num_heads("attention_heads_size")
