"""Layers holding an attention's q, k, v projections themselves (`Wq`, `Wq_1` ... `Wv_2`) and
handing the projected q, k, v to an attention module that holds only the output projection: the
output projection is found in that module (by the attention's number in a decoder layer). Before,
the attention blocks were an interface error ("cannot tell where the candidate keeps
self_attn.q_proj.weight"). Every weight is still compared: a planted bug is a mismatch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def held(candidate_file):
    return candidate_file("layer_held_projections.py")


def test_an_encoder_layer_holding_its_q_k_v_projections_matches(held):
    res = check("encoder_layer", f"{held}:HeldProjectionEncoderLayer", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any(m.startswith("self_attn.out_proj.weight <- attention.fc_out.weight") for m in res.mapping), \
        res.mapping


def test_a_decoder_layer_holding_numbered_projections_matches(held):
    res = check("decoder_layer", f"{held}:HeldProjectionDecoderLayer", examples=10)
    assert res.verdict == "match", render_text(res)


def test_values_projected_with_the_key_projection_are_a_mismatch(held):
    res = check("encoder_layer", f"{held}:HeldProjectionEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_both_attentions_ending_in_one_output_projection_are_a_mismatch(held):
    res = check("decoder_layer", f"{held}:HeldProjectionDecoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
