"""A throwaway, writable copy of the submission's own folder inside the worker's private view.

Student code often writes beside itself when imported or built: a `config.py` making `logs/`,
`data/` or `media/` next to the package, a tokenizer cached in the repository. The submission's
folder is the instructor's copy of what the student handed in, so the worker may never change it;
bound read-only into the view, such an import raised PermissionError and the code was never
checked (LOAD_ERROR). Where the view is built (view.private_view), the submission's folder is
instead copied into the view's tmpfs at the same path: the code reads and writes there as it
would at home, and every write is gone when the worker ends. The instructor's folder is never
written (it is not even in the view).

    copy_tree(src, dst) -> bool     False (and dst removed) when src is over the limits below

Only regular files, folders and symbolic links are copied (links as links, never followed: one
pointing outside the view points at nothing there); FIFOs, sockets and devices are left out, and
so are `.git` and `__pycache__` (the submission's modules run from their source anyway). A folder
over COPY_BYTES or COPY_ENTRIES stays bound read-only, as before. What runs is still what the
parent scanned: sources.install(..., frozen=...) refuses a module under the copy whose text
changed, or that appeared, after the copy was made.
"""
from __future__ import annotations

import os
import shutil
import stat

COPY_BYTES = 64 * 1024 * 1024      # a larger folder stays read-only (the view's tmpfs is 256 MiB)
COPY_ENTRIES = 10_000              # files, folders and links
SKIPPED = frozenset({".git", "__pycache__"})


def _entries(src: str):
    """(path, lstat) of every entry below src, folders before what they hold; SKIPPED left out."""
    for top, dirs, files in os.walk(src, followlinks=False):
        dirs[:] = [d for d in dirs if d not in SKIPPED]
        for name in dirs + files:
            path = os.path.join(top, name)
            yield path, os.lstat(path)


def _fits(src: str) -> bool:
    size = count = 0
    for _, st in _entries(src):
        count += 1
        size += st.st_size if stat.S_ISREG(st.st_mode) else 0
        if count > COPY_ENTRIES or size > COPY_BYTES:
            return False
    return True


def _copy_file(path: str, target: str, mode: int) -> None:
    """A regular file's bytes, opened without following a link or blocking on a FIFO swapped in
    since it was listed (such an entry is skipped)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return
        with open(target, "xb") as out:
            shutil.copyfileobj(f, out, 1 << 20)
    os.chmod(target, (mode & 0o777) | stat.S_IWUSR)


def copy_tree(src: str, dst: str) -> bool:
    """Copy the folder src to dst, a path on the view's own tmpfs that does not exist yet or is an
    empty folder (the caller makes sure no bound folder lies above it); False, with dst left empty,
    when src is over COPY_BYTES / COPY_ENTRIES or cannot be read or written whole."""
    src = os.path.abspath(src)
    made = not os.path.lexists(dst)
    if not made and (os.path.islink(dst) or not os.path.isdir(dst) or os.listdir(dst)):
        return False          # only an empty folder of ours (a hidden folder's tmpfs) is reused
    try:
        if not os.path.isdir(src) or os.path.islink(src) or not _fits(src):
            return False
        if made:
            os.makedirs(dst)
        for path, st in _entries(src):
            target = os.path.join(dst, os.path.relpath(path, src))
            if stat.S_ISDIR(st.st_mode):
                os.mkdir(target, 0o755)
            elif stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(path), target)
            elif stat.S_ISREG(st.st_mode):
                _copy_file(path, target, st.st_mode)
        return True
    except OSError:
        if os.path.isdir(dst) and not os.path.islink(dst):
            for name in os.listdir(dst):            # what this call wrote, on the view's tmpfs
                target = os.path.join(dst, name)
                if os.path.isdir(target) and not os.path.islink(target):
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    try:
                        os.unlink(target)
                    except OSError:
                        pass
        return False
