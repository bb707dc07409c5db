"""A whole model on torch's own encoder/decoder layers, sequence-first inside, stacks named `enc` /
`dec`, with a float32 positional buffer: its layers are found, and the float32 table's rounding
sends the check to a float32 re-check (a MATCH under a stated assumption) instead of a MISMATCH. A
planted bug (source padding not passed to the cross-attention) stays a mismatch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("library_layer_models.py")


def test_a_model_with_a_float32_table_matches_under_a_stated_assumption():
    res = check("model", f"{FILE}:LibraryLayerSeq2Seq", examples=10)
    assert res.verdict == "match", render_text(res)
    assert res.notes[0].startswith("assumption: the candidate computes part of the model in float32"), res.notes
    assert "checked again with --dtype float32" in res.notes[0], res.notes[0]


def test_a_planted_bug_in_a_library_layer_model_stays_a_mismatch():
    res = check("model", f"{FILE}:LibraryLayerSeq2SeqBUG", examples=25, shrink=False)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)
    assert not any(n.startswith("assumption:") for n in res.notes), res.notes
