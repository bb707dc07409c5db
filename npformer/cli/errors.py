"""The command line's own error: a problem with the arguments or the files they name."""
from __future__ import annotations


class CliError(Exception):
    """A problem with the command line: printed as one line, exit status 2."""
