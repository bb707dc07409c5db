"""An encoder layer naming its model width `n_dim` (beside `hidden_dim` and `head_num`): `n_dim` is
d_model, as `n_embd` is (before, `n_dim` got the feed-forward width by position and `hidden_dim`
the model width). A model keeping its stacks inside its parts (`encoder.enc_blocks`,
`decoder.dec_blocks`) and its output layer as `decoder.out_linear`: the names a model uses at its
top are looked for inside its encoder and decoder too (before, an interface error listed every
layer's weights). Planted bugs: MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

FILE = "part_named_stacks.py"


def test_n_dim_is_the_model_width(candidate_file):
    res = check("encoder_layer", f"{candidate_file(FILE)}:DimNamedEncoderLayer", examples=8)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "'n_dim': passed" not in text, text


def test_a_planted_bug_in_the_n_dim_layer_is_a_mismatch(candidate_file):
    res = check("encoder_layer", f"{candidate_file(FILE)}:DimNamedEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_stacks_inside_the_encoder_and_decoder_parts_are_found(candidate_file):
    res = check("model", f"{candidate_file(FILE)}:StackedPartsTransformer", examples=6)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_the_part_stacked_model_is_a_mismatch(candidate_file):
    res = check("model", f"{candidate_file(FILE)}:StackedPartsTransformerBUG", examples=15, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
