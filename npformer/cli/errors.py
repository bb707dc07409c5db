"""The command line's own error: a problem with the arguments or the files they name."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from npformer.data.display import visible


class CliError(Exception):
    """A problem with the command line: printed as one line, exit status 2."""


def one_line(message: str) -> str:
    """An error message as one terminal line: control characters and newlines (a file name or an
    argument may hold them) escaped, so the error is one line and a name cannot move the cursor."""
    return visible(message).replace("\n", "\\n")


def where_it_was_looked_for(error: BaseException) -> str:
    """For a missing file named by a relative path (a checkpoint, a model folder): the folder it was
    looked for in, as `--data` says it (a command run from another folder than the one training ran
    in is the usual cause); empty for an absolute path, a file that exists or another error."""
    name = getattr(error, "path", None) or getattr(error, "filename", None)
    if not isinstance(error, FileNotFoundError) or not isinstance(name, (str, os.PathLike)):
        return ""
    if Path(name).is_absolute() or "relative path" in str(error):
        return ""
    return f" (a relative path is read from the current folder, {Path.cwd()})"


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one terminal line (`one_line`): an unknown option
    holding a newline or a terminal escape is shown escaped, never obeyed or split."""

    def error(self, message):
        super().error(one_line(message))
