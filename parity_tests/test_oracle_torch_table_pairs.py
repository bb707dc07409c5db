"""Torch positional modules holding two trainable tables of the positional shape: a learned table
beside a sinusoid parameter is placed (the learned one gets the reference's sinusoid) and matches,
its planted one-row-late twin stays a mismatch; a ViT class-token embedding (output one row longer)
is an interface error naming its parameters. Reading the two tables of a torch module once failed
inside the oracle (ORACLE_ERROR)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def pairs(candidate_file):
    return candidate_file("torch_table_pairs.py")


def test_a_learned_table_beside_a_sinusoid_parameter_matches(pairs):
    res = check("positional", f"{pairs}:LearnedBesideFixedPositions", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("learned positional table (learned)" in n for n in res.notes), res.notes


def test_its_one_row_late_twin_is_a_mismatch(pairs):
    res = check("positional", f"{pairs}:LearnedBesideFixedPositionsBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_class_token_embedding_is_an_interface_error_not_an_oracle_failure(pairs):
    res = check("positional", f"{pairs}:ClassTokenPositions", examples=5)
    assert res.verdict == "interface_error", render_text(res)
    assert "cls_token" in render_text(res)
