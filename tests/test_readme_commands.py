"""Every command the README shows is one its parser accepts: each `npformer ...`, `npformer-oracle
...` and `python -m benchmarks ...` in a code span or a bash block, with the synopsis brackets
opened, the first of each `a|b` alternative taken and the placeholders (N, FILE, DIR, ...) filled,
parses with no unknown option and no bad value. A renamed option or choice fails here.

What is run, and where: the main job `npformer train` (100 s) and `python -m benchmarks --quick`
(a minute) are too long for CI and are run in their tests with tiny sizes
(tests/npformer/cli/test_help_examples.py runs every command quoted in `--help`;
tests/benchmarks/); `npformer gradcheck --only NAME` is cheap and run below; the install and suite
commands are .ci/run's (tests/test_ci_command.py).
"""
from __future__ import annotations

import re
import shlex

import pytest

from tests.paths import ROOT

PLACEHOLDERS = {"N": "2", "M": "2", "K": "2", "T": "0.8", "P": "0.9", "S": "0", "A": "0.6", "STR": "x",
                "FILE": "f.txt", "FOLDER": "folder", "DIR": "out", "NAME": "layernorm"}
PROGRAMS = ("npformer ", "npformer-oracle ", "python -m benchmarks")


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        found += [ln.split("  #")[0].strip() for ln in block.splitlines()]
    found += [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))]
    out = []
    for cmd in found:
        if cmd.startswith(PROGRAMS) and "..." not in cmd and cmd not in out:
            out.append(cmd)
    return out


def concrete(cmd: str) -> list[str]:
    """The synopsis as a command line: [optional] parts kept, a\\|b -> a, placeholders filled."""
    cmd = re.sub(r"(\S+?)(?:\\\|\S+?)+(?=[\s\]]|$)", r"\1", cmd)        # first alternative
    cmd = cmd.replace("[MASK]", "<MASK>").replace("[", " ").replace("]", " ").replace("<MASK>", "[MASK]")
    words = [PLACEHOLDERS.get(w, w) for w in shlex.split(cmd)]
    return words


def parser_of(words: list[str]):
    if words[0] == "npformer":
        from npformer.cli.parser import build_parser
        return build_parser(), words[1:]
    if words[0] == "npformer-oracle":
        from parity_tests.oracle.parser import build_parser
        return build_parser(), words[1:]
    from benchmarks.cli import build_parser
    return build_parser(), words[3:]


COMMANDS = readme_commands()


def test_the_readme_shows_commands_of_every_program():
    assert len(COMMANDS) >= 20
    for prog in PROGRAMS:
        assert any(c.startswith(prog) for c in COMMANDS), prog


@pytest.mark.parametrize("cmd", COMMANDS)
def test_the_readme_command_parses(cmd, capsys):
    words = concrete(cmd)
    parser, argv = parser_of(words)
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit:
        pytest.fail(f"README: `{cmd}` is refused by its parser: {capsys.readouterr().err.strip()}")
    assert not extra, f"README: `{cmd}`: unknown arguments {extra}"


def test_readme_gradcheck_only_runs(capsys):
    from npformer.cli.main import main
    assert "npformer gradcheck [--only NAME]" in COMMANDS
    assert main(["gradcheck", "--only", "layernorm"]) == 0
    assert "layernorm" in capsys.readouterr().out.lower()
