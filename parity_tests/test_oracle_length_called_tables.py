"""Positional modules whose forward takes the sequence length T and returns the table
(`def forward(self, seq_len, offset=0)`): x and token ids both fail, an int gives a table of that
many positions; every example then calls it with its T and compares x + table (said in the notes).
Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def tables(candidate_file):
    return candidate_file("length_called_tables.py")


@pytest.mark.parametrize("name", ["LengthTable", "TorchLengthTable"])
def test_a_table_returned_for_a_length_matches(tables, name):
    res = check("positional", f"{tables}:{name}", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("forward takes the sequence length" in n for n in res.notes), res.notes


@pytest.mark.parametrize("name", ["LengthTableBUG", "TorchLengthTableBUG"])
def test_a_planted_bug_in_a_table_returned_for_a_length_is_a_mismatch(tables, name):
    res = check("positional", f"{tables}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
