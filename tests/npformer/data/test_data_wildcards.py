"""A quoted wildcard pattern given as --data (`--data "notes/*.txt"`: the shell expands patterns,
npformer does not) is refused in one line that says it looks like a pattern and how many files it
matches, so the user knows to leave it unquoted or give the folder."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from npformer.data.text_files import TextFileError, read_corpus

TEXT = b"a line of text that is long enough.\n" * 40


def test_a_quoted_pattern_is_named_as_one_with_its_matches(tmp_path, capsys):
    (tmp_path / "a.txt").write_bytes(TEXT)
    (tmp_path / "b.txt").write_bytes(TEXT)
    pattern = str(tmp_path / "*.txt")
    code = main(["train", "--task", "lm", "--data", pattern, "--context", "32", "--steps", "1",
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--data {pattern}: no such file or folder" in err
    assert "wildcard pattern" in err and "matches 2 file(s)" in err and "unquoted" in err


def test_a_pattern_matching_nothing_says_so(tmp_path):
    with pytest.raises(TextFileError, match=r"wildcard pattern.*matches no file here"):
        read_corpus([tmp_path / "notes" / "ch[0-9].md"])


def test_a_plain_missing_name_gets_no_pattern_hint(tmp_path):
    with pytest.raises(TextFileError, match="no such file or folder") as e:
        read_corpus([tmp_path / "missing.txt"])
    assert "wildcard" not in str(e.value)
