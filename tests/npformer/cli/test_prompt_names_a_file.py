"""`npformer generate CKPT prompt.txt` continues the text "prompt.txt"; when an INPUT is the name of
an existing file, a note on stderr says it is read as that text, not as the file, and how to pass
the file's text. An INPUT that names no file gets no note."""
from __future__ import annotations

import io

from npformer.cli.text import read_inputs
from npformer.data.tokenizers.char import CharTokenizer

TOKENIZER = CharTokenizer.train("abcdefghijklmnopqrstuvwxyz .'$()")


def test_an_input_naming_a_file_gets_a_note(tmp_path, monkeypatch):
    (tmp_path / "my prompt.txt").write_text("once upon a time")
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    assert read_inputs(["my prompt.txt", "the cat"], TOKENIZER, file=err) == ["my prompt.txt", "the cat"]
    notes = [n for n in err.getvalue().splitlines() if "name of a file" in n]
    assert len(notes) == 1, err.getvalue()
    assert "'my prompt.txt' is also the name of a file here" in notes[0]
    assert "\"$(cat 'my prompt.txt')\"" in notes[0]


def test_no_note_for_text_or_a_folder(tmp_path, monkeypatch):
    (tmp_path / "notes").mkdir()
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    read_inputs(["the cat", "notes", ""], TOKENIZER, file=err)
    assert "name of a file" not in err.getvalue()
