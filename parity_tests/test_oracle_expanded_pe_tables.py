"""A positional module taking token ids and returning its table repeated along the batch, (B, T, d)
with equal rows: read as the table (the oracle compares x + table), not as x + PE; a planted bug in
the same style still fails."""
from __future__ import annotations

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.frameworks import NumpyOps
from parity_tests.oracle.reading.recognise.batch_tables import add_rows, repeated_table

pytest.importorskip("torch")

FILE = candidate_path("expanded_pe_tables.py")


@pytest.mark.parametrize("name, verdict", [
    ("ExpandedSinusoidTable", "match"),
    ("ExpandedSinusoidTableSwapped", "mismatch"),
])
def test_a_table_repeated_along_the_batch_is_the_table(name, verdict):
    res = check("positional", f"{FILE}:{name}", examples=10)
    assert res.verdict == verdict, render_text(res)
    assert any("takes token ids (B, T)" in n for n in res.notes), res.notes


def test_only_equal_rows_make_a_table():
    rows = np.tile(np.arange(6.0).reshape(1, 3, 2), (2, 1, 1))
    assert repeated_table(rows, NumpyOps(), 2, 2)
    different = rows + np.arange(2.0)[:, None, None]
    assert not repeated_table(different, NumpyOps(), 2, 2)
    assert not repeated_table(rows[:1], NumpyOps(), 1, 2)
    x = np.ones((2, 2, 2))
    assert np.array_equal(add_rows(rows, x, (2, 2, 2)), x + rows[:, :2])
    assert add_rows(rows, x, (3, 2, 2)) is None
