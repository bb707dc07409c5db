"""The benchmarks' result files (JSON tables, plots), each written whole or not at all: into a
temporary file beside it, fsynced, then renamed over the name (npformer.io.files.atomic_write). A
run stopped mid-write (Ctrl-C, a full disk) leaves the earlier file as it was, never half a file."""
from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

from npformer.io.files import atomic_write


def new_output_problem(path, flag: str = "--out") -> str | None:
    """Why `path` cannot take a new result file, or None: checked before a run's minutes of
    measuring, so nothing is replaced and nothing measured is lost. A missing folder is fine
    (write_json makes it); an existing name (a dangling link too) or a file where a folder must be
    is not."""
    p = Path(path).absolute()
    if os.path.lexists(p):
        return f"{flag} {path}: the file exists; give a new path (nothing is replaced)"
    above = next(a for a in p.parents if a.exists())
    if not above.is_dir():
        return f"{flag} {path}: {above} is a file, not a folder"
    return None


def write_json(path, doc: Any, *, default=str) -> Path:
    """doc as indented JSON at path (its folder made if missing); values JSON cannot hold go
    through `default` (str: dtypes, paths)."""
    Path(path).absolute().parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(doc, indent=1, default=default).encode("utf-8")
    return atomic_write(path, lambda f: f.write(data))


def save_figure(fig, path, dpi: int = 110) -> Path:
    """A matplotlib figure as a PNG at path (rendered in memory first)."""
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    data = buf.getvalue()
    return atomic_write(path, lambda f: f.write(data))
