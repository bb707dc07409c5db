"""A feed-forward width given as a multiple under a name holding the word `expansion` that no list
holds (`layer_expansion`, camelCase `layerExpansion`) is read as the multiplier: passed
d_ff / d_model, the width drawn as a multiple from there on, said so. Before, the argument took a
size by position and the layer was built at the wrong width. Planted bug: MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "expansion_word_layers.py"


def test_an_expansion_word_is_a_width_multiplier(candidate_file):
    res = check("encoder_layer", f"{candidate_file(FILE)}:ExpansionWordEncoderLayer", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "'layer_expansion': a feed-forward width multiplier" in text, text


def test_the_planted_bug_behind_an_expansion_word_is_a_mismatch(candidate_file):
    res = check("encoder_layer", f"{candidate_file(FILE)}:ExpansionWordEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
