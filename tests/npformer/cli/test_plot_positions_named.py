"""`npformer plot CKPT --out DIR` draws the attention maps only; the positions need `--positions`.
Every text that promises the positional-encoding picture (the command's description, its line in
`npformer --help`, the README's row) names `--positions` beside it."""
import os
import re

import pytest

from npformer.cli.parser import build_parser
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args
from tests.paths import ROOT

POSITIONAL = re.compile(r"position", re.I)


def plot_parser():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub, sub.choices["plot"]


def test_plot_without_the_option_draws_no_positions(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    ckpt = str(tmp_path / "m.npz")
    assert run(["train", *tiny_train_args(steps=1), "--save", ckpt], capsys)[0] == 0
    plain, both = tmp_path / "plain", tmp_path / "both"
    assert run(["plot", ckpt, "--out", str(plain)], capsys)[0] == 0
    assert run(["plot", ckpt, "--out", str(both), "--positions"], capsys)[0] == 0
    assert not [n for n in os.listdir(plain) if n.startswith("positions")]
    assert [n for n in os.listdir(both) if n.startswith("positions")]


def test_the_command_description_names_the_option_with_the_positions():
    sub, plot = plot_parser()
    summary = next(a.help for a in sub._choices_actions if a.dest == "plot")
    for text in (plot.description, summary):
        for sentence in re.split(r"(?<=\.) ", text):
            if POSITIONAL.search(sentence.replace("--positions", "")):
                assert "--positions" in sentence, sentence


def test_the_readme_row_names_the_option_with_the_positions():
    rows = [ln for ln in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
            if ln.startswith("| `npformer plot")]
    assert rows
    for row in rows:
        if POSITIONAL.search(row.replace("--positions", "")):
            assert "--positions" in row, row
