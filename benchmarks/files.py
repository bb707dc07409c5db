"""The benchmarks' result files (JSON tables, plots), each written whole or not at all: into a
temporary file beside it, fsynced, then renamed over the name (npformer.io.files.atomic_write). A
run stopped mid-write (Ctrl-C, a full disk) leaves the earlier file as it was, never half a file."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from npformer.io.files import atomic_write


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
