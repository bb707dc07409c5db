"""Cross-attention taking the encoder's output first and the query second under names that say
neither (`forward(x, y, mask)`): the argument handed to the query projection is read as the query
(before, the oracle said "'y' is required"). A planted bug is still caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "query_second_attention.py")

pytest.importorskip("torch")


def test_cross_attention_taking_the_query_second_matches():
    res = check("mha", f"{CANDS}:MemoryFirstAttention", examples=6)
    assert res.verdict == "match", render_text(res)
    assert any("forward(x, y, ...): the one handed to the query projection is the query, 'y' read "
               "as the query and 'x' as key and value" in n for n in res.notes), res.notes


def test_values_taken_from_the_query_are_a_mismatch():
    res = check("mha", f"{CANDS}:MemoryFirstAttentionQueryValues", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
