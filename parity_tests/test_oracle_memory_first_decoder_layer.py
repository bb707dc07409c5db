"""A decoder layer taking the encoder's memory first and its own input second under names that
say neither (`forward(x, y, self_mask, cross_mask)`): the argument only ever handed to a call beside
the other is read as the memory (before, `x` was taken as the decoder input: MISMATCH). A planted
bug is still caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "memory_first_decoder_layer.py")

pytest.importorskip("torch")


def test_a_decoder_layer_taking_the_memory_first_matches():
    res = check("decoder_layer", f"{CANDS}:MemoryFirstDecoderLayer", examples=6)
    assert res.verdict == "match", render_text(res)
    assert any("'x' is only ever handed to a call beside 'y', read as the encoder's memory" in n
               for n in res.notes), res.notes


def test_self_attention_reading_the_memory_is_a_mismatch():
    res = check("decoder_layer", f"{CANDS}:MemoryFirstDecoderLayerSelfKeysFromMemory", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
