"""A text file too large to read into the memory this process can still allocate is refused before
a byte of it is read, naming the file, its size and the memory available; a file inside a folder
too (it is text: skipping it would train on less than the user gave). Files that fit read as before.

`available_memory` is replaced by a small figure, so the files stay a few KiB."""
from __future__ import annotations

from pathlib import Path

import pytest

from npformer.data import text_files
from npformer.data.text_files import TextTooLargeError, read_corpus
from tests.npformer.conftest import TEXT_CORPUS, run_cli, text_lm_args

MEMORY = 64 << 10                                   # 64 KiB "available"


@pytest.fixture
def small_memory(monkeypatch):
    monkeypatch.setattr(text_files, "available_memory", lambda: MEMORY)


@pytest.fixture
def no_reading(monkeypatch):
    """Reading any file's bytes fails the test: the refusal must come first."""
    def read_bytes(self):
        raise AssertionError(f"{self} was read")
    monkeypatch.setattr(Path, "read_bytes", read_bytes)


def text_of(nbytes: int) -> str:
    return (TEXT_CORPUS * (nbytes // len(TEXT_CORPUS) + 1))[:nbytes]


def test_a_file_whose_text_cannot_fit_is_refused_before_it_is_read(tmp_path, small_memory, no_reading):
    big = tmp_path / "big.txt"
    big.write_text(text_of(40 << 10))                 # 40 KiB: bytes + text = 80 KiB > 64 KiB
    with pytest.raises(TextTooLargeError) as e:
        read_corpus([big])
    message = str(e.value)
    assert message.startswith(f"--data {big}: too large to read: 40.0 KiB")
    assert "at least 80.0 KiB" in message and "the 64.0 KiB this machine has available" in message
    assert "head -c 100M big.txt > big.part.txt" in message


def test_a_file_that_fits_is_read_whole(tmp_path, small_memory):
    fits = tmp_path / "fits.txt"
    fits.write_text(text_of(20 << 10))                # 20 KiB: 40 KiB < 64 KiB
    assert read_corpus([fits]).text == text_of(20 << 10) + "\n"


def test_the_files_read_before_count(tmp_path, small_memory):
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text(text_of(30 << 10))
    second.write_text(text_of(20 << 10) + "x")        # 2 x 20 KiB + 30 KiB > 64 KiB; alone it fits
    assert read_corpus([second]).files == [str(second)]
    with pytest.raises(TextTooLargeError, match=r"with the 30\.0 KiB of text read before it"):
        read_corpus([first, second])


def test_a_file_too_large_inside_a_folder_stops_the_run_rather_than_being_skipped(tmp_path,
                                                                                  small_memory):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text(text_of(1 << 10))
    (folder / "b.txt").write_text(text_of(40 << 10))
    with pytest.raises(TextTooLargeError, match=r"b\.txt: too large to read"):
        read_corpus([folder])


def test_the_command_line_says_so_in_one_line(tmp_path, capsys, small_memory, no_reading, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("big.txt").write_text(text_of(40 << 10))
    code, out, err = run_cli(["train", "--task", "lm", "--data", "big.txt", *text_lm_args()], capsys)
    assert code == 2
    assert err.startswith("npformer train: error: --data big.txt: too large to read: 40.0 KiB")
    assert err.count("\n") == 1 and "Traceback" not in err
