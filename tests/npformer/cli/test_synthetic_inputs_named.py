"""`generate` on a synthetic-task checkpoint names the INPUT whose symbols the vocabulary lacks (the
error said `text:`, a name the user never gave), and says how a text with spaces is read when that
is why its symbols are unknown (`"abc dab"`: two words, read as two symbols)."""
from __future__ import annotations

import pytest

from tests.npformer.conftest import run_cli, tiny_train_args


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    from npformer.cli.main import main
    folder = tmp_path_factory.mktemp("synthetic")
    saved = {}
    for task in ("reverse", "mlm"):
        saved[task] = str(folder / f"{task}.npz")
        assert main(["train", *tiny_train_args(task=task), "--save", saved[task]]) == 0
    return saved


@pytest.mark.parametrize("task, symbols", [("reverse", "abcd"), ("mlm", "abcd#_")])
def test_an_input_with_unknown_symbols_is_named(checkpoints, capsys, task, symbols):
    code, _, err = run_cli(["generate", checkpoints[task], "abd", "xyz"], capsys)
    assert code == 2
    assert err == (f"npformer generate: error: input 'xyz': unknown symbols ['x', 'y', 'z']; this "
                   f"vocabulary has {len(symbols)} symbols: {symbols}\n")


def test_a_quoted_pair_of_inputs_is_explained(checkpoints, capsys):
    code, _, err = run_cli(["generate", checkpoints["reverse"], "abc dab"], capsys)
    assert code == 2
    assert err.startswith("npformer generate: error: input 'abc dab': unknown symbols ['abc', 'dab']")
    assert err.rstrip().endswith("(a text with spaces is read as symbols separated by spaces, 'a b c'; "
                                 "several inputs are separate arguments, not one quoted string)")


def test_spaced_symbols_are_read_without_the_note(checkpoints, capsys):
    code, out, err = run_cli(["generate", checkpoints["reverse"], "a b c"], capsys)
    assert code == 0 and err == "" and "a b c ->" in out
