"""Reading rows of text from a user's files: translation pairs and labelled texts.

    read_pairs(paths)     -> Rows   translation pairs, from one TSV file (source<TAB>target per
                                    line, the layout of OPUS/Tatoeba exports and many Hugging Face
                                    datasets) or from two line-aligned files (fairseq's train.de +
                                    train.en: line i of the one translates line i of the other)
    read_labelled(path)   -> Rows   labelled texts, from a TSV file (text<TAB>label per line, e.g.
                                    GLUE's SST-2) or a CSV file with a header naming a `text` (or
                                    `sentence`) column and a `label` column

Each row keeps the number of the line it came from (1-based), so every later report (a row too
long for the model, a held-out example) can name it. Files are read by npformer.data.text_files
(empty, binary and non-UTF-8 files refused there, line endings normalised).

A line that does not fit the layout is never dropped: reading stops with TextFileError naming the
file, the first bad line's number and what is wrong with it, and how many lines are bad in all.
Blank lines (only whitespace, on both sides for two files) are skipped and counted (Rows.blank).
A TSV header (a first line whose second field is `label`, or `source<TAB>target`) is skipped.
"""
from __future__ import annotations

import contextlib
import csv
import io
from dataclasses import dataclass, field

from npformer.data.text_files import TextFileError, read_text_file

__all__ = ["Rows", "read_pairs", "read_labelled", "TEXT_COLUMNS", "LABEL_COLUMNS"]

TEXT_COLUMNS = ("text", "sentence", "review", "content")      # CSV header names of the text column
LABEL_COLUMNS = ("label", "labels", "class", "category")      # and of the label column
_PAIR_HEADERS = {("source", "target"), ("src", "tgt")}


@dataclass
class Rows:
    """Rows read from `files`: (line number, first field, second field), in file order."""
    rows: list = field(default_factory=list)           # [(line, a, b)]
    files: list = field(default_factory=list)          # the file paths, as given
    text: str = ""                                     # every file's text joined (for its digest)
    blank: int = 0                                     # blank lines skipped

    def __len__(self) -> int:
        return len(self.rows)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _refuse(path, bad: list, layout: str) -> None:
    """TextFileError for the first of `bad` [(line, why)], with the count of bad lines."""
    if bad:
        line, why = bad[0]
        more = f"; {len(bad)} bad lines in all" if len(bad) > 1 else ""
        raise TextFileError(path, f"line {line}: {why} (expected {layout}){more}")


def _two_fields(path, text: str, names: tuple[str, str], header_ok) -> Rows:
    """Rows of a file of `a<TAB>b` lines (see the module docstring)."""
    layout = f"one {names[0]}<TAB>{names[1]} per line"
    out, bad, blank = [], [], 0
    for n, line in enumerate(_lines(text), start=1):
        if not line.strip():
            blank += 1
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            why = "no tab" if len(parts) == 1 else f"{len(parts) - 1} tabs, {len(parts)} columns"
            bad.append((n, why))
            continue
        a, b = parts[0].strip(), parts[1].strip()
        if n == 1 and header_ok(a.lower(), b.lower()):
            continue
        if not a or not b:
            bad.append((n, f"the {names[0] if not a else names[1]} is empty"))
            continue
        out.append((n, a, b))
    _refuse(path, bad, layout)
    if not out:
        raise TextFileError(path, f"no rows: expected {layout}")
    return Rows(out, [str(path)], text, blank)


def read_pairs(paths) -> Rows:
    """Translation pairs from `paths`: one TSV file, or two line-aligned files (source, target)."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    if len(paths) == 1:
        return _two_fields(paths[0], read_text_file(paths[0]), ("source", "target"),
                           lambda a, b: (a, b) in _PAIR_HEADERS)
    if len(paths) != 2:
        raise TextFileError(" ".join(map(str, paths)), f"expected one TSV file (source<TAB>target) "
                                                       f"or two line-aligned files (source, target), "
                                                       f"got {len(paths)} paths")
    src_path, tgt_path = paths
    src, tgt = _lines(read_text_file(src_path)), _lines(read_text_file(tgt_path))
    if len(src) != len(tgt):
        raise TextFileError(src_path, f"{len(src)} lines, but the target file {tgt_path} has "
                                      f"{len(tgt)}: two files must be line-aligned (line i of the "
                                      f"one translates line i of the other)")
    out, bad, blank = [], [], 0
    for n, (a, b) in enumerate(zip(src, tgt), start=1):
        a, b = a.strip(), b.strip()
        if not a and not b:
            blank += 1
        elif not a or not b:
            bad.append((n, f"empty in {src_path if not a else tgt_path} but not in "
                           f"{tgt_path if not a else src_path}"))
        else:
            out.append((n, a, b))
    _refuse(src_path, bad, "a non-empty line on both sides")
    if not out:
        raise TextFileError(src_path, "no rows: every line is blank")
    return Rows(out, [str(src_path), str(tgt_path)], "\n".join(src) + "\0" + "\n".join(tgt), blank)


def read_labelled(path) -> Rows:
    """Labelled texts from one file: (line, text, label) rows (see the module docstring)."""
    path = str(path)
    text = read_text_file(path)
    if not path.lower().endswith(".csv"):
        return _two_fields(path, text, ("text", "label"), lambda a, b: b in LABEL_COLUMNS)
    with _fields_up_to(len(text)):
        return _read_csv(path, text)


@contextlib.contextmanager
def _fields_up_to(n: int):
    """csv's limit on one field's length (131,072 characters by default, for the whole process)
    raised to `n` while a file is read, then put back: a long text in one row is valid CSV."""
    old = csv.field_size_limit()
    csv.field_size_limit(max(n, old))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _read_csv(path: str, text: str) -> Rows:
    """The rows of a CSV file's `text` (header naming a text and a label column)."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except (StopIteration, csv.Error) as e:
        raise TextFileError(path, f"line 1: not a CSV header ({e or 'empty'})") from None
    ti = next((header.index(c) for c in TEXT_COLUMNS if c in header), None)
    li = next((header.index(c) for c in LABEL_COLUMNS if c in header), None)
    if ti is None or li is None:
        raise TextFileError(path, f"line 1: expected a CSV header with a text column "
                                  f"({'/'.join(TEXT_COLUMNS)}) and a label column "
                                  f"({'/'.join(LABEL_COLUMNS)}), got {header[:8]}")
    out, bad, blank = [], [], 0
    try:
        for fields in reader:
            n = reader.line_num
            if not any(f.strip() for f in fields):
                blank += 1
                continue
            if len(fields) != len(header):
                bad.append((n, f"{len(fields)} fields, the header has {len(header)}"))
                continue
            t, lab = fields[ti].strip(), fields[li].strip()
            if not t or not lab:
                bad.append((n, f"the {'text' if not t else 'label'} is empty"))
                continue
            out.append((n, t, lab))
    except csv.Error as e:
        raise TextFileError(path, f"line {reader.line_num}: not CSV ({e})") from None
    _refuse(path, bad, "one row per text with its label, as the header says")
    if not out:
        raise TextFileError(path, "no rows after the header")
    return Rows(out, [path], text, blank)
