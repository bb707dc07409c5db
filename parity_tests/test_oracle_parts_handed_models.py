"""A model whose constructor takes its parts built (`Transformer(encoder, decoder, pad_idx)`) and
whose project holds no function building it from sizes is an interface error naming those parts:
before, two vocabulary sizes were handed over by position as the encoder and the decoder, and the
verdict was RAISED ("'int' object has no attribute ...") as if the candidate had failed. Sizes
named as parts by a size word (`encoder_layers`, `dec_vocab_size`) are still sizes."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.model_factory import part_named  # noqa: E402


def test_a_model_taking_its_parts_built_is_an_interface_error(candidate_file):
    res = check("model", f"{candidate_file('parts_handed_models.py')}:PartsHandedTransformer",
                examples=3)
    text = render_text(res)
    assert res.verdict == "interface_error", text
    assert "takes its parts built (encoder, decoder)" in text, text


@pytest.mark.parametrize("name, part", [("encoder", True), ("src_embed", True), ("generator", True),
                                        ("encoder_layers", False), ("dec_vocab_size", False),
                                        ("embed_dim", False), ("n_enc", False)])
def test_part_names_and_size_names(name, part):
    assert part_named(name) is part
