"""The command line's own error: a problem with the arguments or the files they name."""
from __future__ import annotations

import argparse

from npformer.data.display import visible


class CliError(Exception):
    """A problem with the command line: printed as one line, exit status 2."""


def one_line(message: str) -> str:
    """An error message as one terminal line: control characters and newlines (a file name or an
    argument may hold them) escaped, so the error is one line and a name cannot move the cursor."""
    return visible(message).replace("\n", "\\n")


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one terminal line (`one_line`): an unknown option
    holding a newline or a terminal escape is shown escaped, never obeyed or split."""

    def error(self, message):
        super().error(one_line(message))
