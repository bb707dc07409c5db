"""A UTF-16 or UTF-32 text file (what Windows Notepad's "Unicode" and PowerShell's `>` write) given
as --data is named as such, with the iconv line that converts it; it used to be called "a binary
file, not text (a NUL byte at offset 1)", which left the user nothing to do. Binary files are still
binary."""
from __future__ import annotations

import os

import pytest

from npformer.cli.main import main
from npformer.data.text_files import read_corpus

TEXT = "A line of plain text, long enough to learn from.\n" * 40
MIXED = "naïve café 日本語 😀 tab\there\n" * 60


def encode(text: str, codec: str, bom: bytes = b"") -> bytes:
    return bom + text.encode(codec)


CASES = {
    "utf-16 le bom": (encode(TEXT, "utf-16-le", b"\xff\xfe"), "UTF-16 little-endian, byte-order mark FF FE", "UTF-16"),
    "utf-16 be bom": (encode(MIXED, "utf-16-be", b"\xfe\xff"), "UTF-16 big-endian, byte-order mark FE FF", "UTF-16"),
    "utf-32 le bom": (encode(TEXT, "utf-32-le", b"\xff\xfe\0\0"), "UTF-32 little-endian, byte-order mark FF FE 00 00",
                      "UTF-32"),
    "utf-32 be bom": (encode(MIXED, "utf-32-be", b"\0\0\xfe\xff"), "UTF-32 big-endian, byte-order mark 00 00 FE FF",
                      "UTF-32"),
    "utf-16 le": (encode(TEXT, "utf-16-le"), "UTF-16LE, no byte-order mark", "UTF-16LE"),
    "utf-16 be mixed": (encode(MIXED, "utf-16-be"), "UTF-16BE, no byte-order mark", "UTF-16BE"),
}


def train(path, *more):
    return main(["train", "--task", "lm", "--data", str(path), "--context", "32", "--steps", "1",
                 "--no-progress", *more])


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_wide_unicode_file_is_named_with_its_conversion(tmp_path, capsys, case):
    data, got, iconv = CASES[case]
    path = tmp_path / "notes.txt"
    path.write_bytes(data)
    save = tmp_path / "out.npz"
    assert train(path, "--save", str(save)) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"npformer train: error: --data {path}: expected UTF-8 text, got {got}; convert it, e.g. "
        f"iconv -f {iconv} -t UTF-8 notes.txt > notes.utf8.txt"], err
    assert not os.path.exists(save)


def test_the_named_conversion_gives_a_file_that_trains(tmp_path, capsys):
    """*regression guard*: what iconv would write (the text in UTF-8) is accepted."""
    for case, (data, _, codec) in CASES.items():
        path = tmp_path / f"{case.replace(' ', '_')}.txt"
        path.write_bytes(data.decode(codec.lower()).encode("utf-8"))
        assert read_corpus([str(path)]).text.lstrip("\ufeff") in (TEXT, MIXED), case


def test_a_wide_file_in_a_folder_is_skipped_with_its_encoding(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT)
    (tmp_path / "b.txt").write_bytes(CASES["utf-16 le bom"][0])
    corpus = read_corpus([str(tmp_path)])
    assert corpus.files == [str(tmp_path / "a.txt")]
    assert [(os.path.basename(p), why.split(";")[0]) for p, why in corpus.skipped] == \
        [("b.txt", "expected UTF-8 text, got UTF-16 little-endian, byte-order mark FF FE")]


@pytest.mark.parametrize("data, offset", [
    (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"x" * 2000, 8),
    (bytes(range(256)) * 8, 0),
    (b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x03\0>\0\x01\0\0\0" * 50, 7),
])
def test_binary_files_are_still_binary(tmp_path, capsys, data, offset):
    """*regression guard*: NULs at random places, or in both halves of the byte pairs, are binary."""
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert train(path) == 2
    assert f"a binary file, not text (a NUL byte at offset {offset})" in capsys.readouterr().err
