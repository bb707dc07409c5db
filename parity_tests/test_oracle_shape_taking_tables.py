"""A positional table function whose one argument is the table's shape (`f(shape)`, broadcasting
onto it): called with (T, d_model). Before, it was handed the length alone and raised inside its own
code ("'int' object is not subscriptable"). Planted bug (base 1000): MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.table_call import takes_shape

FILE = "shape_taking_tables.py"


def test_a_table_function_taking_a_shape_matches(candidate_file):
    res = check("positional", f"{candidate_file(FILE)}:sinusoid_for_shape", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_the_shape_taking_table_is_a_mismatch(candidate_file):
    res = check("positional", f"{candidate_file(FILE)}:sinusoid_for_shapeBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


@pytest.mark.parametrize("src,want", [("def f(shape): pass", "shape"),
                                      ("def f(table_shape): pass", "table_shape"),
                                      ("def f(max_len, d_model): pass", None),
                                      ("def f(length): pass", None)])
def test_only_one_parameter_named_for_a_shape_is_read_as_one(src, want):
    ns: dict = {}
    exec(src, ns)  # noqa: S102 - a literal signature
    assert takes_shape(ns["f"]) == want
