"""A whole model taking its masks as Hugging Face does, key paddings (batch, length) with 1 = a real
token under seq2seq names (`input_sequence`, `input_attention_mask`, `output_sequence`,
`output_attention_mask`), the future masked by the model itself: the names are read, the masks are
handed over in that form, and right code matches (it raised on the oracle's 4-axis masks). A decoder
that sees the future stays a mismatch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("key_padding_models.py")


def test_a_model_taking_key_paddings_matches():
    res = check("model", f"{FILE}:PaddedSeq2Seq", examples=12)
    assert res.verdict == "match", render_text(res)
    assert any("taken as key paddings (batch, length)" in n for n in res.notes), res.notes


def test_a_model_whose_decoder_sees_the_future_is_a_mismatch():
    res = check("model", f"{FILE}:PaddedSeq2SeqBUG", examples=100, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
