"""A labelled CSV whose text field is longer than the csv module's default field limit (131,072
characters, a long review or article) is valid CSV and is read; the process-wide limit is put back
afterwards, also when the file is refused."""
from __future__ import annotations

import csv

import pytest

from npformer.data.text_files import TextFileError
from npformer.data.text_rows import read_labelled

LONG = "a long review " * 15000                     # 210,000 characters in one field


def write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["text", "label"])
        w.writerows(rows)
    return path


def test_a_field_longer_than_csvs_default_limit_is_read(tmp_path):
    path = write_csv(tmp_path / "reviews.csv", [["short and fine", "pos"], [LONG, "neg"],
                                                ["after it", "pos"]])
    before = csv.field_size_limit()
    rows = read_labelled(path)
    assert [(n, len(t), lab) for n, t, lab in rows.rows] == \
        [(2, len("short and fine"), "pos"), (3, len(LONG.strip()), "neg"), (4, len("after it"), "pos")]
    assert csv.field_size_limit() == before


def test_the_limit_is_put_back_when_the_file_is_refused(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(f'text,label\n"{LONG}",pos\nonly one field\n', encoding="utf-8")
    before = csv.field_size_limit()
    with pytest.raises(TextFileError, match=r"line 3: 1 fields, the header has 2"):
        read_labelled(path)
    assert csv.field_size_limit() == before
