"""A cross-attention whose key and value projections are one packed (2D, D) Linear (`self.kv`,
split with chunk(2, -1)) beside a query projection of its own: k|v found by its shape, keys first,
unless a probe (keys handed over as 0, values random) shows the values are read from the first
half. Before, k_proj/v_proj had no counterpart (an interface error). A planted bug stays MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def packed(candidate_file):
    return candidate_file("packed_key_value.py")


def test_keys_first_packed_key_value_matches(packed):
    res = check("mha", f"{packed}:PackedKeyValueAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("a packed k|v" in str(m) for m in res.mapping), res.mapping
    assert not any("values first" in n for n in res.notes), res.notes


def test_values_first_packed_key_value_matches_and_says_so(packed):
    res = check("mha", f"{packed}:ValueFirstPackedKeyValueAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("holds the values first" in n for n in res.notes), res.notes


def test_values_read_from_the_key_half_are_a_mismatch(packed):
    res = check("mha", f"{packed}:PackedKeyValueAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
