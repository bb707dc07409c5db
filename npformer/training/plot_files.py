"""Where the pictures go: the names a plot command may write, and how each PNG reaches the disk.

    plots_in(folder)            the files there a plot command may replace (PLOT_NAME)
    save_png(fig, path)         the figure written atomically (npformer.io.files.atomic_write)
    with writing(replace=False) as written:
        ...                     every save_png in the block keeps a file that appeared at its path
                                since the caller checked the folder (FileExistsError), and `written`
                                lists the paths the block wrote

A command checks its folder before the long work (`--plot`, `--out`); a file another program
writes there meanwhile (a second run into the same folder) must not be replaced by the rename at the
end unless the user passed --overwrite, and a set that fails part way removes only its own pictures.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import re
from typing import Iterator

__all__ = ["PLOT_NAME", "plots_in", "save_png", "writing"]

# every name a plot of `train --plot` or `plot --out` may have (loss, positions*, attention maps,
# confusion matrix): a folder already holding one is refused unless --overwrite
PLOT_NAME = re.compile(r"(loss|confusion|positions(_\w+)?|attn_(encoder|decoder|cross)_layer\d+"
                       r"(_head\d+)?)\.png")

# (replace an existing file?, the paths written so far) of the innermost `writing` block
_WRITING: contextvars.ContextVar[tuple[bool, list[str]] | None] = contextvars.ContextVar(
    "npformer_plot_writing", default=None)


def plots_in(folder) -> list[str]:
    """The files in `folder` that a plot command may replace, sorted ([] when it is not a folder)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if PLOT_NAME.fullmatch(n))


@contextlib.contextmanager
def writing(replace: bool) -> Iterator[list[str]]:
    """Inside the block, save_png replaces an existing file only when `replace`; yields the list of
    the paths the block has written (complete files under their names)."""
    written: list[str] = []
    token = _WRITING.set((bool(replace), written))
    try:
        yield written
    finally:
        _WRITING.reset(token)


def save_png(fig, path: str) -> str:
    """fig as a PNG at `path`, written atomically: a failed write leaves any earlier file there
    unchanged and no partial PNG behind. Missing folders are created. Outside a `writing` block an
    existing file is replaced (as matplotlib's savefig does)."""
    from npformer.io.files import atomic_write
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    mode = _WRITING.get()
    replace = mode is None or mode[0] or os.path.abspath(path) in mode[1]   # (its own: a redraw)
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=110, bbox_inches="tight"),
                 replace=replace)
    if mode is not None:
        mode[1].append(os.path.abspath(path))
    return path
