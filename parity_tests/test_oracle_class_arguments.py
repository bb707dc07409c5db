"""A required constructor argument that is a block's class (`attn_cls`, `ffn_factory`,
`attention: type[Attention]`, `make_ffn: Callable[..., nn.Module]`): the oracle passes the class
itself, which the constructor builds, and says so in a note. Before, it passed a built instance,
and the constructor's call of it raised ("MHA.forward() got an unexpected keyword argument").
Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def layers(candidate_file):
    return candidate_file("class_arguments.py")


def test_a_decoder_layer_given_block_classes_by_name_matches(layers):
    res = check("decoder_layer", f"{layers}:ClassArgDecoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any("'attn_cls': passed the class Attention itself" in n for n in res.notes), res.notes


def test_a_planted_cross_attention_input_there_is_a_mismatch(layers):
    res = check("decoder_layer", f"{layers}:ClassArgDecoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_an_encoder_layer_given_classes_by_annotation_matches(layers):
    res = check("encoder_layer", f"{layers}:AnnotatedClassEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_planted_residual_there_is_a_mismatch(layers):
    res = check("encoder_layer", f"{layers}:AnnotatedClassEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
