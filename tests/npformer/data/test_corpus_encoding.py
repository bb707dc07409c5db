"""The corpus of a language model is encoded by one table lookup for the character tokenizer
(npformer.data.text_lm.encode_ids); its ids must be exactly the tokenizer's own encode."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from npformer.data.text_lm import encode_ids
from npformer.data.tokenizers import BPETokenizer, CharTokenizer
from tests.npformer.data.tokenizers.text_strategies import text_settings, texts


@given(corpus=texts.filter(bool), text=texts)          # an empty corpus is refused by CharTokenizer.train
@text_settings(100)
def test_encode_ids_equals_encode_on_any_text(corpus, text):
    tok = CharTokenizer.train(corpus)
    got = encode_ids(tok, text)
    assert got.dtype == np.int32 and got.tolist() == tok.encode(text)


@pytest.mark.parametrize("text", ["", "a", "Ω日本🦊\U0010ffff zzz", "\x00\x7f\x80"])
def test_encode_ids_of_edge_texts(text):
    tok = CharTokenizer.train("hello world\n日🦊")
    assert encode_ids(tok, text).tolist() == tok.encode(text)


def test_encode_ids_with_a_lone_surrogate_falls_back_to_encode():
    tok = CharTokenizer("ab\ud800")
    assert encode_ids(tok, "a\ud800b\udfff").tolist() == tok.encode("a\ud800b\udfff")


def test_encode_ids_with_an_empty_vocabulary_gives_unknowns():
    assert encode_ids(CharTokenizer(""), "ab").tolist() == [3, 3]


def test_encode_ids_of_a_bpe_tokenizer_is_its_encode():
    tok = BPETokenizer.train("hello hello world", vocab_size=262)
    assert encode_ids(tok, "hello Ω").tolist() == tok.encode("hello Ω")
