"""A layer handed its attention and feed-forward as built blocks whose classes live in sibling
files of its folder, not in its own file (`EncoderLayer(self_attn, feed_forward, size, dropout)`):
the oracle builds them from those files and matches a correct layer; a planted missing residual
stays MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def layer(candidate_file):
    return candidate_file("sibling_file_blocks", "encoder_layer.py")


def test_blocks_from_sibling_files_are_built_and_the_layer_matches(layer):
    res = check("encoder_layer", f"{layer}:EncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any("built a MultiHeadAttention" in n for n in res.notes), res.notes


def test_a_planted_missing_residual_with_blocks_from_sibling_files_is_a_mismatch(layer):
    res = check("encoder_layer", f"{layer}:EncoderLayer_BUG", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
