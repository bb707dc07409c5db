"""A MemoryError that no early check foresaw is one line that says what to make smaller for the
command that ran: never empty parentheses (NumPy's `MemoryError()` has no message), never training
options to `generate`, and, with `--data`, the text, which is read whole and encoded at about 10
times its size."""
from __future__ import annotations

import pytest

from npformer.cli import main as cli_main
from tests.npformer.conftest import run_cli


def run_out_of_memory(monkeypatch, capsys, argv, error=MemoryError()):
    def out_of_memory(args):
        raise error
    monkeypatch.setitem(cli_main.COMMANDS, argv[0], out_of_memory)
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_an_empty_memory_error_has_no_empty_parentheses(monkeypatch, capsys):
    err = run_out_of_memory(monkeypatch, capsys, ["train"])
    assert err == ("npformer train: error: out of memory; use smaller sizes (--batch-size, --eval-size, "
                   "--max-len, --d-model, --d-ff)\n")


def test_numpys_words_are_kept(monkeypatch, capsys):
    err = run_out_of_memory(monkeypatch, capsys, ["train"],
                            MemoryError("Unable to allocate 5.96 GiB for an array"))
    assert err.startswith("npformer train: error: out of memory (Unable to allocate 5.96 GiB for an array); ")


def test_a_run_on_your_text_names_the_text(monkeypatch, capsys):
    err = run_out_of_memory(monkeypatch, capsys, ["train", "--task", "lm", "--data", "book.txt"])
    assert err.rstrip().endswith("or less text in --data (reading and encoding it takes about 10 "
                                 "times its size)")


@pytest.mark.parametrize("argv, smaller", [
    (["generate", "lm.npz", "hello"], "use fewer or shorter INPUTs, a smaller --beam or --max-new-tokens"),
    (["evaluate", "ckpt.npz"], "use a smaller --eval-size"),
    (["plot", "ckpt.npz", "--out", "maps"], "use a shorter --input"),
])
def test_other_commands_name_their_own_options(monkeypatch, capsys, argv, smaller):
    err = run_out_of_memory(monkeypatch, capsys, argv)
    assert err == f"npformer {argv[0]}: error: out of memory; {smaller}\n"
    assert "--d-model" not in err
