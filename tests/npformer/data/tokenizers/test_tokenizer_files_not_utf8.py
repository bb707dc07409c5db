"""A tokenizer file that is not UTF-8 (binary, or saved in another encoding) is one ValueError naming
the file, the byte and its offset; line endings are split as a text-mode file splits them."""
import pytest

from npformer.data.tokenizers import WordPieceTokenizer
from npformer.data.tokenizers.files import read_utf8_lines
from npformer.data.tokenizers.gpt2_bpe import read_merges, read_vocab


@pytest.mark.parametrize("reader,name", [(read_vocab, "vocab.json"), (read_merges, "merges.txt"),
                                         (WordPieceTokenizer.from_file, "vocab.txt")])
def test_latin1_file_names_itself_and_the_byte(reader, name, tmp_path):
    f = tmp_path / name
    f.write_bytes('{"caf\xe9": 0}\n'.encode("latin-1"))
    with pytest.raises(ValueError, match=rf"^{f}: not UTF-8: byte 0xe9 at offset 5 \(.*\); a "
                                         r"tokenizer file is UTF-8 text$"):
        reader(str(f))


def test_lines_split_as_text_mode_splits_them(tmp_path):
    f = tmp_path / "vocab.txt"
    f.write_bytes(b"[PAD]\r\n[UNK]\rcaf\xc3\xa9\n\nlast")
    with open(f, encoding="utf-8") as text_mode:
        expected = [line.rstrip("\r\n") for line in text_mode]
    assert read_utf8_lines(str(f)) == expected == ["[PAD]", "[UNK]", "café", "", "last"]
