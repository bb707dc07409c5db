"""`npformer train --task lm --data PATH` refuses what cannot be a text corpus: one line naming the
path and what is wrong, exit status 2, nothing written."""
from __future__ import annotations

import os

import pytest

from npformer.cli.main import main

ENOUGH = "a line of text that is long enough.\n" * 40                     # 1440 characters


def write(path, data: bytes):
    path.write_bytes(data)
    return path


CASES = {
    "empty": (lambda d: write(d / "empty.txt", b""), "the file is empty"),
    "whitespace": (lambda d: write(d / "blank.txt", b" \n\n\t\n"), "only whitespace"),
    "binary": (lambda d: write(d / "image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"x" * 2000),
               "a binary file, not text (a NUL byte at offset 8)"),
    "late NUL": (lambda d: write(d / "late.txt", b"x" * 9000 + b"\0" + ENOUGH.encode()),
                 "a binary file, not text (a NUL byte at offset 9000)"),   # past the first 8 KiB
    "latin-1": (lambda d: write(d / "latin.txt", ENOUGH.encode() + "caf\xe9\n".encode("latin-1")),
                f"not UTF-8: byte 0xe9 at offset {len(ENOUGH) + 3}"),
    "too short": (lambda d: write(d / "short.txt", b"only a few words here\n" * 3),
                  "too short for --context 32 with a 0.1 validation split"),
    "missing": (lambda d: d / "nowhere.txt", "no such file or folder"),
    "no text in folder": (lambda d: (write(d / "a.bin", b"\0\1\2"), write(d / "b.txt", b""), d)[2],
                          "the folder holds no text files (2 files skipped"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_corpus_is_one_line_naming_the_file(tmp_path, capsys, case):
    make, message = CASES[case]
    folder = tmp_path / "in"
    folder.mkdir()
    path = make(folder)
    save = tmp_path / "out.npz"
    code = main(["train", "--task", "lm", "--data", str(path), "--context", "32", "--steps", "1",
                 "--no-progress", "--save", str(save)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"--data {path}: " in err and message in err, err
    assert not os.path.exists(save)


def test_the_same_text_in_utf8_is_accepted(tmp_path, capsys):
    path = write(tmp_path / "ok.txt", ENOUGH.encode() + "caf\xe9\n".encode())
    assert main(["train", "--task", "lm", "--data", str(path), "--context", "32", "--steps", "1",
                 "--no-progress", "--d-model", "16", "--heads", "2", "--d-ff", "16",
                 "--layers", "1"]) == 0


@pytest.mark.parametrize("argv,message", [
    (["--task", "reverse", "--data", "x.txt"], "--data: your own text trains --task lm (a language "
                                              "model), translate or classify (or mlm with --init "
                                              "BERT_FOLDER); got --task reverse"),
    (["--task", "lm", "--context", "16"], "--context: only with --data FILE"),
    (["--task", "lm", "--data", "x.txt", "--vocab-size", "300"],
     "--vocab-size 300: only with --tokenizer bpe"),
    (["--task", "lm", "--data", "x.txt", "--max-number", "20"], "--max-number: for the synthetic"),
])
def test_text_options_out_of_place_are_refused(capsys, argv, message):
    assert main(["train", *argv, "--steps", "1", "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_output_path_is_checked_before_reading_the_corpus(tmp_path, capsys):
    taken = tmp_path / "taken.npz"
    taken.write_bytes(b"keep")
    assert main(["train", "--task", "lm", "--data", str(tmp_path / "nowhere.txt"), "--steps", "1",
                 "--save", str(taken)]) == 2
    assert "--save" in capsys.readouterr().err and taken.read_bytes() == b"keep"


@pytest.mark.parametrize("paths, got", [(123, "int 123"), ([123], "int 123"), (None, "NoneType None"),
                                        (b"notes.txt", "bytes b'notes.txt'"), ([None], "NoneType")])
def test_a_corpus_path_that_is_not_a_path_is_a_type_error_naming_data(paths, got):
    from npformer.data.text_files import read_corpus
    with pytest.raises(TypeError, match=r"--data: expected a file or folder path \(str or "
                                        r"os.PathLike\).* got " + got):
        read_corpus(paths)


def test_a_broken_link_in_a_folder_is_skipped_and_counted(tmp_path):
    from npformer.data.text_files import read_corpus
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("some text\n", encoding="utf-8")
    (folder / "gone.txt").symlink_to(tmp_path / "nowhere.txt")
    corpus = read_corpus(folder)
    assert corpus.files == [str(folder / "a.txt")]
    assert corpus.skipped == [(str(folder / "gone.txt"), f"a symbolic link to "
                                                         f"'{tmp_path / 'nowhere.txt'}', which does "
                                                         f"not exist; expected a text file")]


def test_a_folder_without_text_counts_its_own_skipped_files_only(tmp_path):
    """Folders `a` and `ab`: a name prefix is not a folder prefix."""
    from npformer.data.text_files import TextFileError, read_corpus
    for name, n_bad in (("a", 2), ("ab", 1)):
        (tmp_path / name).mkdir()
        for k in range(n_bad):
            (tmp_path / name / f"{k}.bin").write_bytes(b"\0\1")
    (tmp_path / "a" / "keep.txt").write_text("text\n", encoding="utf-8")
    with pytest.raises(TextFileError, match=r"--data .*ab: the folder holds no text files \(1 files"):
        read_corpus([tmp_path / "a", tmp_path / "ab"])


def test_a_pipe_as_data_is_refused_saying_to_write_a_file(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert main(["train", "--task", "lm", "--data", str(fifo), "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert f"--data {fifo}: not a regular file (a pipe, device or socket" in err and "write it to a file" in err


def test_a_folder_skips_a_file_whose_nul_byte_comes_after_the_first_8_kib(tmp_path):
    from npformer.data.text_files import read_corpus
    write(tmp_path / "a.txt", ENOUGH.encode())
    write(tmp_path / "b.txt", ENOUGH.encode() * 8 + b"\0tail\n")            # NUL at 11520 bytes
    corpus = read_corpus([tmp_path])
    assert corpus.text == ENOUGH and "\0" not in corpus.text
    assert [os.path.basename(p) for p, _ in corpus.skipped] == ["b.txt"]


def test_missing_relative_path_names_the_folder_it_was_looked_for_in(tmp_path, capsys,
                                                                      monkeypatch):
    """A relative --data that is not there says where it was looked for (a newcomer running from
    another folder); an absolute one does not need to."""
    monkeypatch.chdir(tmp_path)
    code = main(["train", "--task", "lm", "--data", "corpus.txt", "--steps", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert (f"--data corpus.txt: no such file or folder (a relative path is read from the current "
            f"folder, {tmp_path})") in err, err


def test_a_folder_names_the_first_file_it_skips_and_why(tmp_path, capsys):
    """A Latin-1 file in a folder is text the user meant to train on: the header line names it."""
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder / "a.txt", ENOUGH.encode())
    write(folder / "b.txt", "caf\xe9 au lait\n".encode("latin-1"))
    write(folder / "c.txt", b"")
    assert main(["train", "--task", "lm", "--data", str(folder), "--context", "32", "--steps", "1",
                 "--no-progress", "--d-model", "16", "--heads", "2", "--d-ff", "16",
                 "--layers", "1"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert f"2 folder files skipped, first {folder / 'b.txt'}: not UTF-8" in header


@pytest.mark.parametrize("task", ["translate", "classify"])
def test_a_folder_given_to_a_rows_task_is_called_a_folder(tmp_path, capsys, task):
    """`--task translate/classify --data FOLDER` read files only; it used to say the folder was "not
    a regular file (a pipe, device or socket ...)"."""
    folder = tmp_path / "rows"
    folder.mkdir()
    (folder / "a.tsv").write_text("a\tb\n" * 50, encoding="utf-8")
    assert main(["train", "--task", task, "--data", str(folder), "--steps", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"npformer train: error: --data {folder}: is a folder; expected a text file (rows are "
                   f"read from the files given, not from the files of a folder)"], err
