"""Near misses on the command line: an unknown option or command is answered with the closest real
one ("did you mean --steps?") and the command whose --help lists them all."""
from __future__ import annotations

import argparse
import difflib
import re

__all__ = ["command_parser", "unknown_options_message", "closest", "choice_hint"]


def closest(word: str, choices) -> str | None:
    """The choice nearest to `word` by spelling, or None when none is near."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return near[0] if near else None


def command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The sub-parser of `command` (`train`, `generate`, ...) inside the top-level parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]
    raise KeyError(command)


def unknown_options_message(sub: argparse.ArgumentParser, extra: list[str]) -> str:
    """`unrecognized arguments: ...`, then for each unknown option the nearest real one, then where
    the full list is."""
    known = [s for a in sub._actions for s in a.option_strings if s.startswith("--")]
    hints = []
    for arg in extra:
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            near = closest(name, known)
            if near:
                hints.append(f"{name}: did you mean {near}?")
    hint = f" ({'; '.join(hints)})" if hints else ""
    return (f"unrecognized arguments: {' '.join(extra)}{hint}; `{sub.prog} --help` lists every "
            f"option")


def choice_hint(message: str) -> str:
    """For argparse's `invalid choice: 'x' (choose from a, b, ...)`: "; did you mean 'a'?" when a
    listed choice is near x, else ""."""
    m = re.search(r"invalid choice: '?([^'\s]*)'? \(choose from (.*)\)", message)
    if not m:
        return ""
    near = closest(m.group(1), [c.strip().strip("'") for c in m.group(2).split(",")])
    return f"; did you mean '{near}'?" if near else ""
