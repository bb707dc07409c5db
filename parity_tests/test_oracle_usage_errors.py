"""`npformer-oracle`'s usage errors are one terminal line: an unknown option or a misspelt command
holding a newline or a terminal escape is shown escaped, never obeyed or split over lines."""
from __future__ import annotations

import pytest

from parity_tests.oracle.parser import build_parser


def usage_error_line(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err, err
    lines = err.rstrip("\n").split("\n")
    assert [i for i, line in enumerate(lines) if ": error: " in line] == [len(lines) - 1], err
    return lines[-1]


def test_an_unknown_option_with_an_escape_is_shown_escaped(capsys):
    line = usage_error_line(["check", "sdpa", "x.py", "--fo\x1b[31mo", "a\nb"], capsys)
    assert "--fo\\x1b[31mo a\\nb" in line, line


def test_a_misspelt_command_with_a_newline_stays_on_one_line(capsys):
    line = usage_error_line(["gr\nade"], capsys)
    assert "gr\\nade" in line, line
