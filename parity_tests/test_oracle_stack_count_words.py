"""Layer counts named in words no alias lists, the stack last or first (`num_layers_enc`,
`n_dec_blocks`, `layer_num`), are read by their words: before, a model taking `num_layers_enc` /
`num_layers_dec` was built with its default six layers a stack and called an interface error.
Planted bugs: MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.name_words import names_hyper  # noqa: E402

FILE = "stack_count_words.py"


@pytest.mark.parametrize("name, hyper", [("num_layers_enc", "num_encoder_layers"),
                                         ("n_dec_blocks", "num_decoder_layers"),
                                         ("numLayersDecoder", "num_decoder_layers"),
                                         ("layer_num", "num_layers")])
def test_layer_count_words_are_read(name, hyper):
    assert names_hyper(hyper, name)


@pytest.mark.parametrize("name", ["num_enc_dec_layers", "n_layer_heads", "layers_dim", "d_layers"])
def test_other_words_are_not_read_as_a_layer_count(name):
    assert not any(names_hyper(h, name) for h in ("num_layers", "num_encoder_layers",
                                                  "num_decoder_layers"))


def test_a_model_counting_its_stacks_with_the_stack_last_matches(candidate_file):
    res = check("model", f"{candidate_file(FILE)}:StackCountTransformer", examples=6)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_that_model_is_a_mismatch(candidate_file):
    res = check("model", f"{candidate_file(FILE)}:StackCountTransformerBUG", examples=15, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
