"""A positional module holding a learned table (used by default) beside a sinusoid it computes for
`fixed=True` (a second NumPy array, a torch buffer): the learned one takes the reference's
sinusoid, the gap `table` is named, and what is compared is the lookup and the addition. Before,
the learned table stayed random and two fresh instances differed: NONDETERMINISTIC, "dropout still
active?". Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def tables(candidate_file):
    return candidate_file("switchable_position_tables.py")


def test_a_learned_table_beside_a_computed_one_matches_with_the_table_gap(tables):
    res = check("positional", f"{tables}:SwitchablePositions", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "table" in res.gaps, res.gaps
    assert any("learned positional table (param) beside a sinusoid" in n for n in res.notes), res.notes


def test_a_planted_offset_lookup_is_a_mismatch(tables):
    res = check("positional", f"{tables}:SwitchablePositionsBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_the_whole_table_added_is_a_wrong_shape_not_nondeterminism(tables):
    res = check("positional", f"{tables}:WholeTablePositions", examples=10, shrink=False)
    assert res.verdict == "wrong_shape", render_text(res)


def test_a_torch_learned_table_beside_a_sinusoid_buffer_matches_with_the_table_gap(candidate_file):
    pytest.importorskip("torch")
    res = check("positional", f"{candidate_file('buffered_position_tables.py')}:BufferedPositions", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "table" in res.gaps, res.gaps


def test_a_planted_scale_on_that_table_is_a_mismatch(candidate_file):
    pytest.importorskip("torch")
    res = check("positional", f"{candidate_file('buffered_position_tables.py')}:BufferedPositionsBUG", examples=25,
                shrink=False)
    assert res.verdict == "mismatch", render_text(res)
