"""Every command-line error is one terminal line, whatever the names it quotes hold: a newline or a
terminal escape in a file name is shown escaped, never obeyed or split over lines."""
from __future__ import annotations

from npformer.cli.main import main


def test_a_file_name_with_a_newline_stays_on_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exist\ning.npz").write_bytes(b"keep me")
    assert main(["train", "--steps", "1", "--no-progress", "--save", "exist\ning.npz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "--save exist\\ning.npz: exists (pass --overwrite to replace it)" in err, err
    assert (tmp_path / "exist\ning.npz").read_bytes() == b"keep me"


def test_a_terminal_escape_in_a_file_name_is_shown_not_obeyed(tmp_path, capsys):
    name = str(tmp_path / "no\x1b[31msuch.npz")
    assert main(["generate", name, "hi"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1, err
    assert "no\\x1b[31msuch.npz" in err, err


def usage_error(argv, capsys):
    """The error line of a usage error (argparse prints the usage first), checked to be the last."""
    try:
        main(argv)
    except SystemExit as e:
        assert e.code == 2
    else:
        raise AssertionError(f"{argv} was accepted")
    err = capsys.readouterr().err
    assert "\x1b" not in err, err
    lines = err.rstrip("\n").split("\n")
    errors = [i for i, line in enumerate(lines) if ": error: " in line]
    assert errors == [len(lines) - 1], err                # one error line, the last one
    return lines[-1]


def test_an_unknown_option_with_an_escape_or_a_newline_is_shown_escaped(capsys):
    line = usage_error(["train", "--st\x1b[31mps", "3"], capsys)
    assert "--st\\x1b[31mps" in line, line
    line = usage_error(["train", "x\ny"], capsys)
    assert "unrecognized arguments: x\\ny" in line, line


def test_a_misspelt_command_with_an_escape_is_shown_escaped(capsys):
    line = usage_error(["tr\x1b[1main"], capsys)
    assert "tr\\x1b[1main" in line, line

