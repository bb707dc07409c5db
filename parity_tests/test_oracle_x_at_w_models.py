"""Whole models whose attention keeps bare square matrices used as x @ W (stored (in, out)): no probe
can read their layout through a whole model, so a model's check that ends MISMATCH runs once more
with --weight-layout in_out and right code matches, saying so; a planted bug fails under both
layouts. Projections kept one matrix per head ((heads, 1, d_model, d_head)) are read in every layer,
not only in the one the probe build had."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("x_at_w_models.py")
UNSCALED = {"scale_embeddings": False}
SWITCHED = "the model's square matrices are used as x @ W"


@pytest.mark.parametrize("name", ["SquareWeightsTransformer", "HeadStackTransformer"])
def test_models_using_square_matrices_as_x_at_w_match(name):
    res = check("model", f"{FILE}:{name}", examples=12, settings=UNSCALED)
    assert res.verdict == "match", render_text(res)
    assert any(n.startswith(SWITCHED) for n in res.notes), res.notes
    assert res.options.get("weight_layout") == "in_out", res.options


def test_per_head_matrices_are_read_in_every_layer():
    res = check("model", f"{FILE}:HeadStackTransformer", examples=6, weight_layout="in_out",
                settings={**UNSCALED, "num_encoder_layers": 2, "num_decoder_layers": 2})
    assert res.verdict == "match", render_text(res)
    placed = [m for m in res.mapping if m.startswith("decoder.layers.1.cross_attn.k_proj.weight <-")]
    assert placed and "decoder_layers.1.cross_attention.W_k" in placed[0], res.mapping


def test_a_planted_bug_fails_under_both_layouts():
    res = check("model", f"{FILE}:SquareWeightsTransformerBUG", examples=12, settings=UNSCALED)
    assert res.verdict == "mismatch", render_text(res)
    assert any(n.startswith("checked again with --weight-layout in_out") and "mismatch" in n
               for n in res.notes), res.notes


def test_a_replay_keeps_the_layout_it_was_given():
    res = check("model", f"{FILE}:SquareWeightsTransformer", settings=UNSCALED,
                replay={"B": 1, "S": 2, "T": 2, "d_model": 4, "num_heads": 2, "d_ff": 3,
                        "num_encoder_layers": 1, "num_decoder_layers": 1, "src_vocab": 5,
                        "tgt_vocab": 5, "src_len": [2], "tgt_len": [2], "seed": 7})
    assert res.verdict == "mismatch", render_text(res)
    assert not any(n.startswith(SWITCHED) for n in res.notes), res.notes
