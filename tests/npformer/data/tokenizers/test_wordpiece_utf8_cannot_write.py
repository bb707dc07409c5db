"""WordPiece (BERT folders) refuses text UTF-8 cannot write, as the byte-level tokenizers do: BERT's
text cleaning drops every character of category C*, so the lone surrogates Python keeps for bytes
that were not UTF-8 (a prompt typed in another encoding) vanished from the input silently, and
`generate BERT_FOLDER` filled the mask of another sentence. The command names the INPUT before the
folder is loaded."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from npformer.data.tokenizers.wordpiece import WordPieceTokenizer

PROMPT = b"hello \xff\xfe world".decode("utf-8", "surrogateescape")       # as sys.argv holds it
TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s"]


def test_a_lone_surrogate_is_named_with_its_byte():
    tok = WordPieceTokenizer(TOKENS)
    with pytest.raises(ValueError, match=r"^text: expected text UTF-8 can write, got a lone surrogate "
                                         r"U\+DCFF at character 6 \(the byte 0xff that was not UTF-8"):
        tok.encode(PROMPT)
    assert tok.encode("hello worlds") == [2, 5, 6, 7, 3]                  # UTF-8 text still encodes


def test_generate_names_the_input_before_loading_the_folder(tmp_path, capsys):
    (tmp_path / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")  # no weights:
    (tmp_path / "vocab.txt").write_text("\n".join(TOKENS) + "\n", encoding="utf-8")  # never loaded
    assert main(["generate", str(tmp_path), "fine [MASK]", PROMPT]) == 2
    err = capsys.readouterr().err
    assert "error: INPUT 'hello \\udcff\\udcfe world': expected text UTF-8 can write" in err, err
