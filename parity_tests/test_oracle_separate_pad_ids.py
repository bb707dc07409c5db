"""A model taking a padding id per side (`src_pad_idx`, `trg_pad_idx`) before its sizes: the target
one is bound by its name (it used to take a layer count by position, so token 1 was padding), and a
cross-attention called `joint_attention` and token tables called `tok_emb` are found. A planted bug
(source padding not hidden) stays a mismatch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("separate_pad_ids.py")


def test_a_target_padding_id_is_bound_by_name_and_the_model_matches():
    res = check("model", f"{FILE}:Seq2Seq", examples=10)
    assert res.verdict == "match", render_text(res)
    assert not any("'trg_pad_idx': passed" in n for n in res.notes), res.notes


def test_a_planted_bug_beside_separate_padding_ids_is_a_mismatch():
    res = check("model", f"{FILE}:Seq2SeqBUG", examples=25, shrink=False)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)
