"""A corpus reads each file once. The held-out split is the corpus's last characters, so a file
read twice (named twice, named and inside a named folder, or reached again through a link) put a
copy of training text into the validation text, and the validation loss measured memorised text.
The same holds for a copy (another file with the same text, found by its SHA-256). A file named
again is refused naming it and its first reading; a file met again inside a folder is skipped and
counted, like the folder's other skipped files."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from npformer.data.text_files import TextFileError, read_corpus

TEXT = "a line of text that is long enough.\n" * 40


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT, encoding="utf-8")
    (folder / "b.txt").write_text("another text\n" * 30, encoding="utf-8")
    return folder


@pytest.mark.parametrize("again", ["same name", "link", "inside the folder"])
def test_a_file_named_twice_is_refused_naming_both_readings(notes, again):
    a = notes / "a.txt"
    if again == "same name":
        paths, first, second = [a, a], a, a
    elif again == "link":
        (notes.parent / "link.txt").symlink_to(a)
        paths, first, second = [a, notes.parent / "link.txt"], a, notes.parent / "link.txt"
    else:
        paths, first, second = [notes, a], a, a
    with pytest.raises(TextFileError) as e:
        read_corpus(paths)
    assert str(e.value).startswith(f"--data {second}: ")
    assert "read already" in str(e.value) and str(first) in str(e.value)


def test_a_file_met_again_inside_a_folder_is_skipped_and_counted(notes):
    (notes / "sub").mkdir()
    (notes / "sub" / "copy_link.txt").symlink_to(notes / "a.txt")
    corpus = read_corpus([notes / "a.txt", notes])
    assert corpus.files == [str(notes / "a.txt"), str(notes / "b.txt")]
    assert corpus.text == TEXT + "another text\n" * 30
    assert [p for p, _ in corpus.skipped] == [str(notes / "a.txt"),
                                              str(notes / "sub" / "copy_link.txt")]
    assert all("read already" in why for _, why in corpus.skipped)


@pytest.mark.parametrize("line_ends", ["\n", "\r\n"])
def test_a_copy_under_another_name_is_refused_naming_both(notes, tmp_path, line_ends):
    """A copy with Windows line endings is the same text once read (line endings normalised)."""
    copy = tmp_path / "copy.txt"
    copy.write_bytes(TEXT.replace("\n", line_ends).encode("utf-8"))
    with pytest.raises(TextFileError) as e:
        read_corpus([notes / "a.txt", copy])
    assert str(e.value).startswith(f"--data {copy}: a copy: the same text as {notes / 'a.txt'}")


def test_a_copy_inside_a_folder_is_skipped_and_counted(notes):
    (notes / "c_copy.txt").write_text(TEXT, encoding="utf-8")
    corpus = read_corpus([notes])
    assert corpus.files == [str(notes / "a.txt"), str(notes / "b.txt")]
    assert corpus.skipped == [(str(notes / "c_copy.txt"),
                               f"a copy: the same text as {notes / 'a.txt'}, read already; each "
                               f"text is read once, or the held-out text would repeat training text")]


def test_cli_refuses_the_same_file_twice_before_training(notes, tmp_path, capsys):
    a = notes / "a.txt"
    save = tmp_path / "lm.npz"
    code = main(["train", "--task", "lm", "--data", str(a), str(a), "--context", "8", "--steps",
                 "1", "--no-progress", "--save", str(save)])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--data {a}: " in err and "read already" in err
    assert out == "" and not save.exists()
