"""A positional table computed in float32 inside a float64 check: MATCH under a stated assumption
after a float32 re-check; a wrong table is still a mismatch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("position_tables.py")


def test_float32_table_matches_under_a_stated_assumption():
    res = check("positional", f"{FILE}:Float32PositionTable", examples=10)
    assert res.verdict == "match", render_text(res)
    assert res.notes[0].startswith("assumption: the candidate computes its table in float32"), res.notes
    assert "checked again with --dtype float32" in res.notes[0], res.notes[0]


def test_float32_table_with_a_bug_stays_a_mismatch():
    res = check("positional", f"{FILE}:Float32PositionTableShifted", examples=25)
    assert res.verdict == "mismatch", render_text(res)
    assert not any(n.startswith("assumption:") for n in res.notes), res.notes


def test_a_replay_is_never_rechecked():
    res = check("positional", f"{FILE}:Float32PositionTable",
                replay={"B": 1, "T": 2, "d_model": 2, "max_len": 64, "seed": 0})
    assert res.verdict == "mismatch", render_text(res)
