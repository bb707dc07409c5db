"""A benchmark run that stops before its end (Ctrl-C, SIGTERM, a full disk, memory) leaves no files
behind.

The run opens `third_party_output.log` in `--out` as it starts and writes `results.json` and the
plots at its end. Stopped in between, the log alone would stay, and the next run into the same
folder would be refused as "an earlier run's files" until the user passes `--overwrite` or deletes
it by hand. `removed_if_stopped` deletes the files the run itself created (never one that was there
before it started) and the folder too where the run made it and it is left empty.
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterable, Iterator


@contextlib.contextmanager
def removed_if_stopped(folder: str, names: Iterable[str]) -> Iterator[None]:
    """On any exception out of the block, delete those of `names` in `folder` that did not exist
    when the block began (and `folder` itself when the block made it and it ends empty)."""
    names = list(names)
    folder_was_there = os.path.lexists(folder)
    there_before = {n for n in names if os.path.lexists(os.path.join(folder, n))}
    try:
        yield
    except BaseException:
        for n in names:
            if n not in there_before:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, n))
        if not folder_was_there:
            with contextlib.suppress(OSError):
                os.rmdir(folder)                 # only when empty
        raise


def stopped_line(exc: BaseException) -> tuple[str, int]:
    """(the one line to print, the exit status) for a run stopped by `exc`."""
    from npformer.cli.option_rules import Terminated

    if isinstance(exc, Terminated):
        return "terminated (SIGTERM): the run stopped before its end; nothing was kept in --out", 143
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C): the run stopped before its end; nothing was kept in --out", 130
    if isinstance(exc, MemoryError):
        return (f"error: out of memory ({exc}); use smaller sizes (--batch-size, --seq-len, "
                f"--configs) or fewer backends; nothing was kept in --out"), 2
    assert isinstance(exc, OSError)
    where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
    return (f"error: cannot write{where}: {exc.strerror or exc}; the run's measurements were not "
            f"kept (free some space in --out, or choose another folder)"), 2
