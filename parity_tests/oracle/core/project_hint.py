"""Where a package the worker took for one the grader lacks is really a folder of the submission's
own project: `from utils.helpers import lin` in `models/attention.py`, with `utils/` beside
`models/`, run from the project's root. The worker sees only the file's folder (docs/ORACLE.md,
"Isolation"), so `utils` got a stand-in and a candidate that needs it is RAISED with "'utils' is
not installed where the oracle runs". That is true but does not say what to do: this adds the
folder and the way to let the worker see it, PYTHONPATH (the worker sees the oracle's PYTHONPATH
folders; reading/package_import.IMPORT_ROOTS).

Runs in the parent on the worker's notes and the file's path only: it looks at names of files, and
never reads nor runs the submission.
"""
from __future__ import annotations

import importlib.util
import os
import re

STANDIN_NOTE = re.compile(r"^'([A-Za-z_][A-Za-z0-9_]*)' is not installed where the oracle runs")
LEVELS = 3              # folders above the file's own where the project's root may be
GRADED_COPY = "oracle-sub-"     # grading/run_files.COPY_PREFIX: `grade` checks a temporary copy,
#                                 whose folder the hint would name: no hint there (the spec decides)


def project_folder(name: str, path: str) -> str | None:
    """The nearest folder above the file at `path` (at most LEVELS up), or the working directory,
    that holds a package or module `name`; None when none does or `name` is installed."""
    try:
        if importlib.util.find_spec(name) is not None:
            return None
    except (ImportError, ValueError):
        return None
    here = os.path.dirname(os.path.abspath(path))
    if any(part.startswith(GRADED_COPY) for part in here.split(os.sep)):
        return None
    folders = []
    for _ in range(LEVELS):
        here, up = os.path.dirname(here), here
        if here == up:
            break
        folders.append(here)
    for folder in dict.fromkeys([*folders, os.getcwd()]):
        if os.path.isdir(os.path.join(folder, name)) or \
                os.path.isfile(os.path.join(folder, name + ".py")):
            return folder
    return None


def with_project_hints(notes: list[str], path: str) -> list[str]:
    """`notes` with each stand-in note for a folder of the project completed by what to run."""
    out = []
    for note in notes:
        m = STANDIN_NOTE.match(note)
        folder = project_folder(m.group(1), path) if m else None
        if folder is not None:
            name, cwd = m.group(1), os.path.realpath(os.getcwd())
            real = os.path.realpath(folder)
            away = os.path.commonpath([real, cwd]) in (real, cwd)    # one holds the other
            note += (f"; but {name!r} is in the submission's project, in {folder}, which the "
                     f"worker does not see: to let it import {name!r}, run with PYTHONPATH={folder}"
                     + (" from a folder outside that one, giving the file's full path (the worker "
                        "never sees the oracle's working directory nor a folder holding it, where "
                        "a solution may sit)" if away else "")
                     + "; everything in that folder becomes readable to the submission")
        out.append(note)
    return out
