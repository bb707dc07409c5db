"""No long option of any `npformer` command can be abbreviated into another: argparse's prefix
matching would read `train --data x` as `--data-parallel x` on a parser without --data."""
from __future__ import annotations

import argparse

import pytest

from npformer.cli.parser import build_parser


class Refused(Exception):
    pass


def _commands():
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, subs.choices


def _refusing(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    def error(message):
        raise Refused(message)
    p.error = error
    return p


@pytest.mark.parametrize("command", sorted(_commands()[1]))
def test_no_prefix_of_a_long_option_is_taken_for_it(command):
    sub = _refusing(_commands()[1][command])
    options = {s for a in sub._actions for s in a.option_strings if s.startswith("--")}
    fill = ["x" for a in sub._actions if not a.option_strings and a.required]  # the positionals
    fill += [s for a in sub._actions if a.option_strings and a.required
             for s in (a.option_strings[0], "x")]                              # e.g. plot --out
    tried = 0
    for opt in sorted(options):
        for k in range(3, len(opt)):
            prefix = opt[:k]
            if prefix in options:
                continue
            tried += 1
            try:
                _, extra = sub.parse_known_args([prefix, *fill])
            except Refused as e:                      # only for what else is missing, never opt
                assert f"argument {opt}" not in str(e), (prefix, opt, str(e))
            else:
                assert prefix in extra, (prefix, opt)
    assert tried > 0


def test_top_level_options_are_not_abbreviated():
    parser = _refusing(_commands()[0])
    _, extra = parser.parse_known_args(["--vers", "train"])
    assert "--vers" in extra


def test_data_is_its_own_option_and_a_prefix_of_data_parallel_is_refused(capsys):
    parser = build_parser()
    args = parser.parse_args(["train", "--task", "lm", "--data", "corpus.txt"])
    assert args.data == ["corpus.txt"] and args.data_parallel == "auto"
    with pytest.raises(SystemExit) as e:
        parser.parse_args(["train", "--data-par", "on"])
    assert e.value.code == 2 and "unrecognized arguments: --data-par" in capsys.readouterr().err
