"""Cross-attention whose forward names its two inputs for the decoder and the encoder
(`forward(decoder_x, encoder_output, mask=None)`, `forward(x, memory)`): the first is the query,
the second key and value (before, `encoder_output` was handed a mask and the attention was
checked as self-attention: RAISED). A planted bug is still caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "memory_named_attention.py")

pytest.importorskip("torch")


@pytest.mark.parametrize("name,query,memory", [
    ("CrossAttention", "decoder_x", "encoder_output"),
    ("MemoryAttention", "x", "memory"),
])
def test_memory_named_cross_attention_matches_as_query_and_key_value(name, query, memory):
    res = check("mha", f"{CANDS}:{name}", examples=6)
    assert res.verdict == "match", render_text(res)
    assert "single input" not in res.gaps.get("cross_attention", ""), res.gaps
    assert any(f"{query!r} read as the query and {memory!r} as key and value" in n
               for n in res.notes), res.notes


def test_a_planted_bug_in_memory_named_cross_attention_is_a_mismatch():
    res = check("mha", f"{CANDS}:CrossAttentionValuesFromDecoder", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
