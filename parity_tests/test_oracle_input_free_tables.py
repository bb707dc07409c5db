"""Positional modules whose forward takes no input and returns the whole table, built for a
maximum length (`def forward(self): return table`): the oracle calls them with nothing, compares
x + table[:T] with the reference and says so. Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def tables(candidate_file):
    return candidate_file("input_free_tables.py")


@pytest.mark.parametrize("name", ["InputFreeTable", "BufferedInputFreeTable"])
def test_a_table_returned_by_a_forward_without_input_matches(tables, name):
    res = check("positional", f"{tables}:{name}", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("forward takes no input" in n for n in res.notes), res.notes


@pytest.mark.parametrize("name", ["InputFreeTableBUG", "BufferedInputFreeTableBUG"])
def test_a_planted_bug_in_an_input_free_table_is_a_mismatch(tables, name):
    res = check("positional", f"{tables}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
