"""Byte-level tokenizers (this project's BPE, GPT-2's) refuse text UTF-8 cannot write, naming the
lone surrogate, its position and the byte it stands for: a command-line prompt typed in another
encoding reaches Python as surrogate escapes, and encoding it raised the codec's bare
"surrogates not allowed". `generate` names the INPUT; the character tokenizer still reads such
characters as its unknown token (with its note)."""
from __future__ import annotations

import pytest

from npformer.cli.errors import CliError
from npformer.cli.text import read_inputs
from npformer.data.tokenizers.bpe import BPETokenizer
from npformer.data.tokenizers.char import CharTokenizer
from npformer.data.tokenizers.gpt2_bpe import GPT2Tokenizer, bytes_to_unicode

PROMPT = b"ab\xff\xfe cd".decode("utf-8", "surrogateescape")        # as sys.argv holds it


def _gpt2() -> GPT2Tokenizer:
    table = bytes_to_unicode()
    return GPT2Tokenizer({table[b]: b for b in range(256)}, [])


@pytest.mark.parametrize("tok", [BPETokenizer.train("the cat sat on the mat " * 20, 270), _gpt2()],
                         ids=["bpe", "gpt2"])
def test_a_lone_surrogate_is_named_with_its_byte(tok):
    with pytest.raises(ValueError, match=r"^text: .*lone surrogate U\+DCFF at character 2 "
                                         r"\(the byte 0xff that was not UTF-8"):
        tok.encode(PROMPT)
    assert tok.encode("ab cd")                                      # UTF-8 text still encodes


def test_generate_names_the_input_for_a_byte_level_tokenizer():
    with pytest.raises(CliError, match=r"^INPUT 'ab\\udcff\\udcfe cd': expected text UTF-8 can "
                                       r"write, got a lone surrogate U\+DCFF"):
        read_inputs(["fine", PROMPT], BPETokenizer.train("the cat sat on the mat " * 20, 270))


def test_the_character_tokenizer_reads_them_as_unknown(capsys):
    assert read_inputs([PROMPT], CharTokenizer.train("abcd ")) == [PROMPT]
    assert "never saw in training" in capsys.readouterr().err
