"""A positional table function returning its table in float32 while the check runs in float64: the
function is made from integers, so no input dtype is broken (it was WRONG_DTYPE); the table's float32
rounding is re-checked at float32 tolerances as a float32 table buffer is, and matches. A wrong base
stays a mismatch."""
from __future__ import annotations

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text

FILE = candidate_path("float32_table_functions.py")


def test_a_float32_table_function_matches_as_float32_code():
    res = check("positional", f"{FILE}:sinusoid_table_float32", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("computes its table in float32" in n for n in res.notes), res.notes


def test_a_float32_table_function_with_the_wrong_base_is_a_mismatch():
    res = check("positional", f"{FILE}:sinusoid_table_float32_BUG", examples=10, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
