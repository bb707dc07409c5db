"""The temporary files of one `grade` run, removed by the grader on every way out.

Each submission is graded from a private copy (`oracle-sub-<run>-XXXX` in the temporary folder,
beside the other copies, where the hostile tests look for them) that its grading process writes
and removes; the confined worker that grading process starts has a scratch folder of its own. A
grading process stopped mid-check (Ctrl-C, SIGTERM, `timeout -s`: stop_workers kills what does not
stop within its grace) never reached its own clean-up, and both were left behind. Now the grader
names them for the run: the copies carry the run's token, and the grading processes make their
other temporary files (the workers' scratch folders) in one folder of the run's (`tempfile.tempdir`
set by the pool's initializer; the name stays a plain `tmpXXXX`, nothing for a submission to
recognise). `RunFiles.remove()` deletes both, after the workers are stopped. A grader killed with
SIGKILL runs no code at all, so only that leaves files behind.
"""
from __future__ import annotations

import glob
import os
import secrets
import shutil
import tempfile

COPY_PREFIX = "oracle-sub-"


def fresh_temp_folder() -> str:
    """The temporary folder a process started now would use (the first of TMPDIR, TEMP, TMP that is
    a writable folder, else tempfile's): this process's `tempfile.gettempdir()` is fixed at its
    first use, and the copies go where the grading processes, started now, would put them."""
    for var in ("TMPDIR", "TEMP", "TMP"):
        d = os.environ.get(var)
        if d and os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
            return os.path.abspath(d)
    return tempfile.gettempdir()


class RunFiles:
    def __init__(self) -> None:
        self.temp_root = fresh_temp_folder()            # where the copies go, as before
        self.token = secrets.token_hex(4)
        self.scratch = tempfile.mkdtemp(dir=self.temp_root)   # the grading processes' other files

    @property
    def copy_prefix(self) -> str:
        return f"{COPY_PREFIX}{self.token}-"

    def pool_options(self) -> dict:
        """ProcessPoolExecutor's initializer arguments: the grading processes' tempfile folder."""
        return {"initializer": use_temp_folder, "initargs": (self.scratch,)}

    def remove(self) -> None:
        """Delete this run's copies and scratch folder (never raises)."""
        for p in glob.glob(os.path.join(glob.escape(self.temp_root), glob.escape(self.copy_prefix) + "*")):
            shutil.rmtree(p, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)


def use_temp_folder(folder: str) -> None:
    """Run in each grading process when it starts: its tempfile calls use `folder`."""
    tempfile.tempdir = folder
