"""`CharTokenizer.train("")` is refused: its vocabulary would hold only the special tokens, so every
character of every later text would encode as the unknown token (it returned such a tokenizer
silently)."""
from __future__ import annotations

import pytest

from npformer.data.tokenizers.char import CharTokenizer


def test_empty_text_is_refused_naming_text():
    with pytest.raises(ValueError, match=r"^text: expected text to learn the characters from, got an "
                                         r"empty string"):
        CharTokenizer.train("")


def test_one_character_is_enough():
    tok = CharTokenizer.train("a")
    assert tok.decode(tok.encode("aa")) == "aa"
