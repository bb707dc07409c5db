"""CharTokenizer: documented ids, exact round trips of its corpus, UNK for unseen characters."""
from __future__ import annotations

import json

from hypothesis import given

from npformer.data.tokenizers import CharTokenizer, char, tokenizer_from_dict

from .text_strategies import text_settings, texts


def test_documented_ids():
    tok = CharTokenizer.train("hello")
    assert (char.PAD, char.BOS, char.EOS, char.UNK) == (0, 1, 2, 3)
    assert tok.chars == "ehlo" and tok.vocab_size == 8          # sorted by code point, from id 4
    assert tok.encode("hole", add_bos=True, add_eos=True) == [1, 5, 7, 6, 4, 2]
    assert tok.encode("hex") == [5, 4, 3]                       # x unseen: UNK
    assert tok.decode([1, 5, 4, 3, 2, 0]) == "he\ufffd"


@text_settings()
@given(texts.filter(bool), texts)                  # an empty corpus is refused: test_char_tokenizer_empty_text.py
def test_corpus_round_trips_and_unseen_characters_are_unk(corpus, other):
    tok = CharTokenizer.train(corpus)
    assert tok.decode(tok.encode(corpus)) == corpus
    assert len(tok.encode(corpus)) == len(corpus)
    ids = tok.encode(other)
    assert [i == char.UNK for i in ids] == [c not in corpus for c in other]
    restored = tokenizer_from_dict(json.loads(json.dumps(tok.to_dict())))
    assert isinstance(restored, CharTokenizer) and restored.encode(other) == ids
