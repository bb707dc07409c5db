"""Positional modules holding a learned (max_len, d) table (an nn.Embedding, a (1, L, d)
nn.Parameter): the oracle places the reference's sinusoid into the table and checks the lookup and
the addition, and says so, as the gap `table` (grading asks for a computed table); a computed table is
no gap. A planted lookup or addition bug stays MISMATCH; a module with a parameter besides its table
stays an interface error."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def tables(candidate_file):
    return candidate_file("learned_position_tables.py")


@pytest.mark.parametrize("name", ["EmbeddingPositions", "ParameterPositions"])
def test_a_learned_table_gets_the_sinusoid_and_matches(tables, name):
    res = check("positional", f"{tables}:{name}", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("learned positional table" in n for n in res.notes), res.notes


@pytest.mark.parametrize("name", ["EmbeddingPositionsBUG", "ParameterPositionsBUG"])
def test_a_planted_bug_beside_a_learned_table_is_a_mismatch(tables, name):
    res = check("positional", f"{tables}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_table_with_another_parameter_stays_an_interface_error(tables):
    res = check("positional", f"{tables}:TableWithProjection", examples=5)
    assert res.verdict == "interface_error", render_text(res)
    assert "mix.weight" in render_text(res)


@pytest.mark.parametrize("name", ["EmbeddingPositions", "NumpyLearnedPositions"])
def test_a_learned_table_is_the_gap_table_and_grading_requires_a_computed_one(tables, name):
    res = check("positional", f"{tables}:{name}", examples=5)
    assert "table" in res.gaps and "learned table" in res.gaps["table"], res.gaps
    graded = check("positional", f"{tables}:{name}", examples=5, require=("table",))
    assert graded.verdict == "incomplete", render_text(graded)


@pytest.mark.parametrize("file, name", [("torch_layers.py", "PositionalEncoding"),
                                        ("computed_numpy_tables.py", "ComputedTableEncoding")])
def test_a_computed_table_is_no_gap(candidate_file, file, name):
    res = check("positional", f"{candidate_file(file)}:{name}", examples=5, require=("table",))
    assert res.verdict == "match" and "table" not in res.gaps, render_text(res)
