"""Fixtures of the fast-variant tests: `split_everything` makes npformer.fast.rows split every job,
however small, and cut it into tiny blocks, and counts the pieces, so a test on a small array
exercises the threaded, blocked path (and can check that it did)."""
from __future__ import annotations

import pytest

from npformer.fast import rows


@pytest.fixture
def split_everything(monkeypatch):
    """Every run_rows job split over its threads and cut into blocks of a few elements; returns a
    list that gets, per run_rows call, the number of ranges it ran on."""
    calls: list[int] = []
    original = rows.row_ranges

    def counting(n, parts):
        out = original(n, parts)
        calls.append(len(out))
        return out
    monkeypatch.setattr(rows, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(rows, "MIN_ELEMENTS_BLOCKED", 1)
    monkeypatch.setattr(rows, "BLOCK", 7)
    monkeypatch.setattr(rows, "row_ranges", counting)
    return calls
