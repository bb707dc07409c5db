"""Layers built from a translation model's config dataclass whose vocabulary sizes, sequence lengths
and padding ids are required fields the layer never reads: the oracle fills them by what their
names mean and compares the layer; a planted bug in the same style still fails."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.base import MISSING  # noqa: E402
from parity_tests.oracle.reading.recognise.config_fields import UNUSED_VOCAB, meaning_value  # noqa: E402

FILE = candidate_path("translation_configs.py")
BUILT = ("source_vocab=16, targetVocabSize=16, src_max_length=512, tgt_max_length=512, "
         "src_pad_idx=0, trg_padding_token=0")


@pytest.mark.parametrize("component, name, verdict", [
    ("encoder_layer", "ConfigEncoderLayer", "match"),
    ("encoder_layer", "ConfigEncoderLayerWidthScale", "mismatch"),
    ("decoder_layer", "ConfigDecoderLayer", "match"),
    ("decoder_layer", "ConfigDecoderLayerSelfMemory", "mismatch"),
])
def test_required_unread_config_fields_are_filled_by_meaning(component, name, verdict):
    res = check(component, f"{FILE}:{name}", examples=15)
    assert res.verdict == verdict, render_text(res)
    built = next(n for n in res.notes if "built TranslationConfig(" in n)
    assert BUILT in built, built


@pytest.mark.parametrize("field, expected", [
    ("targetVocabSize", 7), ("src_vocab_size", 5), ("vocab", 5), ("trg_padding_token", 3),
    ("src_pad_token_id", 0), ("padidx", 0), ("target_seq_length", 512), ("attention_dropout", 0.0),
])
def test_a_field_gets_the_drawn_value_of_its_side(field, expected):
    drawn = {"pad_id": 0, "tgt_pad_id": 3, "src_vocab": 5, "tgt_vocab": 7}
    assert meaning_value(field, drawn) == expected


def test_a_vocabulary_nothing_draws_gets_a_placeholder_and_unnamed_fields_stay_out():
    assert meaning_value("src_vocab_size", {"d_model": 4}) == UNUSED_VOCAB
    for field in ("device", "padding_side", "pad_mode", "tokenizer_path"):
        assert meaning_value(field, {"d_model": 4}) is MISSING, field
