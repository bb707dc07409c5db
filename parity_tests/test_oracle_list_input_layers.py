"""A layer taking its inputs as one list in an order of its own (`memory, x = input` in a decoder
layer): the list is handed over in the order the forward unpacks it, read from its text (each
unpacked name one input's). Before, `input` was no list name and the layer was called
decoder-only (no place for memory). Planted bug: MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

FILE = "list_input_layers.py"


def test_a_memory_first_list_input_decoder_layer_matches(candidate_file):
    res = check("decoder_layer", f"{candidate_file(FILE)}:MemoryFirstListDecoderLayer", examples=8)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "input=[memory, x]" in text, text


def test_a_planted_bug_in_the_list_input_decoder_layer_is_a_mismatch(candidate_file):
    res = check("decoder_layer", f"{candidate_file(FILE)}:MemoryFirstListDecoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
