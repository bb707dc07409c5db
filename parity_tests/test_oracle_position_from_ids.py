"""Positional modules fed token ids: a forward that fails on x (B, T, d) but returns the table
(T, d) for ids (B, T) is called with token ids, and x + table is compared (said in the notes)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.findings import Findings  # noqa: E402
from parity_tests.oracle.reading.frameworks import NumpyOps  # noqa: E402
from parity_tests.oracle.reading.recognise import pe_table  # noqa: E402

FILE = candidate_path("position_tables.py")


@pytest.mark.parametrize("right,wrong", [("IdsPositionTable", "IdsPositionTableWrongBase"),
                                         ("NumpyIdsPositionTable", "NumpyIdsPositionTableSwapped")])
def test_table_from_token_ids_matches_and_bugs_are_caught(right, wrong):
    res = check("positional", f"{FILE}:{right}", examples=5)
    assert res.verdict == "match", render_text(res)
    assert any("token ids" in n for n in res.notes), res.notes
    bad = check("positional", f"{FILE}:{wrong}", examples=25, shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)


def test_token_ids_shape_and_values():
    x = np.zeros((2, 5, 3))
    ids = pe_table.token_ids(x, NumpyOps())
    assert ids.shape == (2, 5) and ids.dtype.kind == "i" and ids.min() >= 1
    assert pe_table.with_token_ids(Findings(), {"x": x}, {"x": x}, NumpyOps())["x"] is x
    assert pe_table.with_token_ids(Findings(table_from_ids=True), {"x": x}, {"x": x},
                                   NumpyOps())["x"].shape == (2, 5)
