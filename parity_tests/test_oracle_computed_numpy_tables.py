"""A NumPy positional encoding whose constructor computes its sinusoid table (`self.pe`) holds no
learned table: its own table is compared (the reference's sinusoid was placed into it before, and
a wrong frequency base was a MATCH). A class with no constructor of its own (its table computed in
a class-level forward) is built without arguments; before, the oracle passed it d_model and max_len
and the check ended INTERFACE_ERROR "takes no arguments"."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def tables(candidate_file):
    return candidate_file("computed_numpy_tables.py")


def test_a_computed_numpy_table_matches(tables):
    res = check("positional", f"{tables}:ComputedTableEncoding", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "compared as computed" in render_text(res)


def test_a_planted_frequency_base_in_that_table_is_a_mismatch(tables):
    res = check("positional", f"{tables}:ComputedTableEncodingBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_class_without_a_constructor_is_built_without_arguments(tables):
    res = check("positional", f"{tables}:StaticTableEncoding", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_frequency_base_there_is_a_mismatch(tables):
    res = check("positional", f"{tables}:StaticTableEncodingBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
