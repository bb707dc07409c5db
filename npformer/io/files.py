"""Safe output files: path checks before work starts, atomic writes, stale temp-file cleanup.

Every file npformer writes for a user (checkpoints, plots, results) goes through here:

    check_output_file(path, option, overwrite=False)   before any long work: refuse a path whose parent
                                                       is a file, that is a directory, that exists
                                                       (unless overwrite), or whose folder cannot be
                                                       written; create missing parent folders
    check_output_dir(path, option)                     the same for an output folder (created if missing)
    atomic_write(path, write, replace=True)            write(f) into `.<name>.tmp.<pid>.<thread>` beside
                                                       `path`, flush + fsync it, rename it over `path`,
                                                       fsync the folder; on any error the temp file is
                                                       removed and whatever was at `path` is untouched;
                                                       replace=False: FileExistsError when `path`
                                                       exists by then (never replaced)
    save_beside(path, save)                            save(p) under the first free name `<stem>-<k><suffix>`
                                                       beside `path` (a run whose output appeared meanwhile)
    clean_stale_temps(folder, name)                    remove `.<name>.tmp.<pid>[.<thread>]` files whose
                                                       process is dead (left by a kill -9 in a save)

Missing parent folders are created (like `mkdir -p`) at check time, so a long run never fails at the
end because a folder was not there. Every error is an OutputPathError (a ValueError) whose message
starts with the option's name, e.g. "--save out/model.npz: exists (pass --overwrite to replace it)".
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import threading
from pathlib import Path
from typing import IO, Callable, Iterator

import numpy as np

from npformer.io.committed import record_written, signals_deferred

__all__ = ["OutputPathError", "check_output_file", "check_output_dir", "atomic_write", "link_new", "keep_mode",
           "clean_stale_temps", "temp_name", "named_os_error", "fsync_dir", "file_path", "check_overwrite",
           "write_target_problem", "save_beside", "made_folders_removed_on_failure"]


class OutputPathError(ValueError):
    """An output path cannot be used or written; the message names the option and the path."""

    def __init__(self, option: str, path, problem: str):
        self.option, self.path, self.problem = option, str(path), problem
        super().__init__(f"{option} {self.path}: {problem}")


def name_max(folder) -> int:
    """The longest file name, in bytes, the file system of `folder` takes (255 where unknown)."""
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


_TEMP_TAIL = 48                          # ".tmp.<pid>.<thread id>" and the leading dot, at most


def _temp_stem(name: str, limit: int) -> str:
    """`name`, or when `.<name>.tmp.<pid>.<thread>` would pass the file system's name limit, its
    start and a hash of the whole (a name of 250 bytes passed the checks and then failed to save,
    after the work, because its temp file's name was too long)."""
    raw = os.fsencode(name)
    if len(raw) + _TEMP_TAIL <= limit:
        return name
    digest = hashlib.sha1(raw).hexdigest()[:12]
    keep = raw[: max(limit - _TEMP_TAIL - len(digest) - 1, 1)]
    return keep.decode("utf-8", "ignore") + "~" + digest          # a character cut in two: dropped


def temp_name(path: Path, pid: int | None = None) -> Path:
    """The temporary file a save of `path` writes first: `.<name>.tmp.<pid>` for process `pid`; for
    this process (pid None) `.<name>.tmp.<pid>.<thread id>`, so two threads saving the same path at
    once each write their own file (with one temp name they wrote into the same file and could leave
    a corrupt archive under `path`). A name too long for that is shortened (`_temp_stem`)."""
    stem = _temp_stem(path.name, name_max(path.absolute().parent))
    if pid is not None:
        return path.with_name(f".{stem}.tmp.{pid}")
    return path.with_name(f".{stem}.tmp.{os.getpid()}.{threading.get_ident()}")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:                  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


def clean_stale_temps(folder, name: str) -> list[Path]:
    """Remove `.<name>.tmp.<pid>[.<thread>]` files in `folder` whose process is no longer running.

    Returns the removed paths. A temp file of a live process (another save in progress) is left alone.
    """
    folder = Path(folder)
    pattern = re.compile(r"^\." + re.escape(_temp_stem(name, name_max(folder)))
                         + r"\.tmp\.(\d+)(?:\.\d+)?$")
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for p in entries:
        m = pattern.match(p.name)
        if m is None or int(m.group(1)) == os.getpid() or _pid_alive(int(m.group(1))):
            continue
        try:
            p.unlink()
            removed.append(p)
        except OSError:
            pass
    return removed


def _writable_dir(option: str, folder: Path, shown) -> None:
    """Raise unless a file can be created in `folder` (tried for real: root ignores permission bits
    in os.access, and a read-only mount refuses even root)."""
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(option, shown, f"folder {folder} is not writable")
    probe = folder / f".npformer-probe.{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise OutputPathError(option, shown, f"cannot create files in folder {folder} "
                                             f"({e.strerror or e})") from None
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass


_MADE: list[Path] = []          # folders the output checks created (this process)


def _make_parents(option: str, folder: Path, shown) -> None:
    """Create `folder` and its missing parents; refuse when one of them is a file."""
    missing = []
    for anc in [folder, *folder.parents]:
        if anc.exists() or anc.is_symlink():
            if not anc.is_dir():
                raise OutputPathError(option, shown, f"{anc} is a file, not a folder")
            break
        missing.append(anc)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputPathError(option, shown, f"cannot create folder {folder} ({e.strerror or e})") \
            from None
    _MADE.extend(missing)


@contextlib.contextmanager
def made_folders_removed_on_failure() -> Iterator[None]:
    """On an exception out of the block (a refused input, an interruption), remove the folders the
    output checks created inside it that are still empty, so a command that wrote nothing leaves
    no folder behind; a folder holding anything is kept."""
    start = len(_MADE)
    try:
        yield
    except BaseException:
        for folder in sorted(_MADE[start:], key=lambda f: len(f.parts), reverse=True):   # deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()
        del _MADE[start:]
        raise
    del _MADE[start:]              # kept: forget them, so a long-lived process does not collect them


def check_overwrite(overwrite) -> bool:
    """The `overwrite` (or `replace`) flag of a writer: a bool (NumPy's included). A truthy string such
    as "no" or "False" would replace the file it was meant to keep."""
    if not isinstance(overwrite, (bool, np.bool_)):
        raise TypeError(f"overwrite: expected a bool (True replaces an existing file), got "
                        f"{overwrite!r}")
    return bool(overwrite)


def file_path(path, what: str) -> Path:
    """`path` as a Path; a TypeError naming `what` unless it is a non-empty str or os.PathLike (the
    API's functions that read or write one file)."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)) or str(path) == "":
        raise TypeError(f"{what}: expected a file path (str or os.PathLike), got "
                        f"{type(path).__name__} {path!r}"[:200])
    return Path(path)


def write_target_problem(p: Path) -> tuple[int, str] | None:
    """Why no file can be written at `p`, as (errno, message), checked before anything is written:
    it is a folder or another non-regular file (a pipe, socket or device), or its folder is a file or
    missing (the API creates no folders). None when it can.
    Each caller raises its own error class with the message."""
    folder = p.absolute().parent
    too_long = _name_too_long(p)
    if too_long is not None:                      # before p.is_dir(), which raises on such a name
        return too_long
    if p.is_dir():
        return errno.EISDIR, "is a folder; expected a file path"
    if p.exists() and not p.is_file():            # replacing it would drop what it is silently
        return errno.EEXIST, "exists and is not a regular file (a pipe, socket or device)"
    if folder.is_dir():
        return None
    if folder.exists():
        return errno.ENOTDIR, f"folder {folder} is a file"
    return errno.ENOENT, f"folder {folder} does not exist (create it first)"


def _name_too_long(p: Path) -> tuple[int, str] | None:
    limit = name_max(p.absolute().parent)
    n = len(os.fsencode(p.name))
    if n > limit:
        return errno.ENAMETOOLONG, f"the file name is {n} bytes; this file system takes {limit} at most"
    return None


def check_output_file(path, option: str, overwrite: bool = False) -> Path:
    """Check that `path` can be written as a new file (or replaced, when `overwrite`); returns it.

    Refused, each with its own message naming `option`: an empty path; a path that is an existing
    folder; an existing file when not `overwrite`; a parent that is a file; a folder where no file can
    be created (read-only, no permission). Missing parent folders are created.
    """
    if path is None or str(path) == "":
        raise OutputPathError(option, repr(path), "expected a file path")
    p = Path(path)
    too_long = _name_too_long(p)                  # (255 bytes where the folder is still missing)
    if too_long is not None:                      # before p.is_dir(), which raises on such a name
        raise OutputPathError(option, path, too_long[1])
    if str(path).endswith(os.sep) or p.is_dir():
        raise OutputPathError(option, path, "is a folder; expected a file path")
    if p.exists() or p.is_symlink():
        if not p.is_file():
            raise OutputPathError(option, path, "exists and is not a regular file")
        if not overwrite:
            raise OutputPathError(option, path, "exists (pass --overwrite to replace it)")
    folder = p.absolute().parent
    _make_parents(option, folder, path)
    _writable_dir(option, folder, path)
    return p


def check_output_dir(path, option: str, writes=(), overwrite: bool = False, create: bool = True) -> Path:
    """Check that `path` is (or can be created as) a folder files can be written into; returns it.

    `writes`: the names of the files the caller will write there; any that already exists (an
    earlier run's results, a model saved before) is refused unless `overwrite`, before any work.
    `create=False`: check only (a missing folder is not made; its nearest existing parent must take
    new files), for a command that reads its input first and calls again with `create=True` once
    there is something to write, so a failed read leaves no empty folder behind.
    """
    if path is None or str(path) == "":
        raise OutputPathError(option, repr(path), "expected a folder path")
    p = Path(path)
    if (p.exists() or p.is_symlink()) and not p.is_dir():
        raise OutputPathError(option, path, "is a file; expected a folder")
    taken = [name for name in writes if os.path.lexists(p / name)]
    if taken and not overwrite:
        shown = ", ".join(taken[:6]) + (f" and {len(taken) - 6} more" if len(taken) > 6 else "")
        raise OutputPathError(option, path, f"holds {shown}; pass --overwrite to replace "
                                            f"them, or choose another folder")
    if not create:
        folder = p.absolute()
        for anc in [folder, *folder.parents]:
            if anc.exists() or anc.is_symlink():
                if not anc.is_dir():
                    raise OutputPathError(option, path, f"{anc} is a file, not a folder")
                _writable_dir(option, anc, path)
                return p
    _make_parents(option, p.absolute(), path)
    _writable_dir(option, p.absolute(), path)
    return p


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:                            # some platforms cannot open a folder
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def named_os_error(e: OSError, path: Path, kept: str) -> OSError:
    """An OSError of e's class, errno and strerror whose filename is `path` (an error raised while
    writing the temp file names the temp file, or nothing at all), with a note saying what became
    of the earlier file (`kept`), shown under the traceback."""
    try:
        new = type(e)(e.errno, e.strerror or str(e), str(path))
    except TypeError:                          # a subclass with another constructor
        new = OSError(e.errno, e.strerror or str(e), str(path))
    new.add_note(f"{path}: {kept}; no temporary file was left")
    return new


def keep_mode(tmp: Path, path: Path) -> None:
    """Give the new file `tmp` the permission bits of the file it is about to replace at `path`
    (a checkpoint kept private with chmod 600 stays private); nothing when there is none."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode):
        os.chmod(tmp, stat.S_IMODE(mode))


def link_new(tmp: Path, path: Path) -> None:
    """Give the complete file `tmp` the name `path` only if nothing has that name: a hard link, which
    the kernel refuses (FileExistsError) when `path` exists, so a file another program wrote there
    since the checks is never replaced. Where links are not supported, a check then a rename."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.replace(tmp, path)


def save_beside(path, save: Callable[[Path], Path], tries: int = 999) -> Path:
    """`save(p)` for the first free name p = `<stem>-<k><suffix>` beside `path`, k = 1, 2, ...; `save`
    must refuse a name taken meanwhile with FileExistsError (an `overwrite=False` write), and the next
    name is tried. FileExistsError when `tries` names are taken."""
    base = Path(path)
    for k in range(1, tries + 1):
        candidate = base.with_name(f"{base.stem}-{k}{base.suffix}")
        if os.path.lexists(candidate):
            continue
        try:
            return save(candidate)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free name beside it ({tries} tried)", str(path))


def atomic_write(path, write: Callable[[IO[bytes]], None], option: str | None = None,
                 replace: bool = True) -> Path:
    """Write a file atomically: `write(f)` fills a temp file, which is fsynced and renamed to `path`.

    Stale temp files of dead processes for the same `path` are removed first. On any failure (disk
    full, interrupted, an exception inside `write`) the temp file is removed, the earlier file at
    `path` (if any) is untouched, and the error is raised: an OSError as an OSError of the same class,
    errno and strerror whose filename is `path`, with a note saying whether an earlier file was
    kept; with `option` given, an OutputPathError naming the option instead. `replace=False`: a file
    at `path` by the time the new one is complete (written since the caller checked the path) is
    kept, and FileExistsError (an OSError, so as above) is raised.
    """
    replace = check_overwrite(replace)
    path = Path(path)
    folder = path.absolute().parent
    clean_stale_temps(folder, path.name)
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        with signals_deferred():                      # the rename and its record, whole (committed.py)
            if replace:
                keep_mode(tmp, path)
                os.replace(tmp, path)
            else:
                link_new(tmp, path)
            record_written(path)
            fsync_dir(folder)
    except OSError as e:
        what = "the disk is full" if e.errno == errno.ENOSPC else (e.strerror or str(e))
        kept = "the earlier file there is unchanged" if path.exists() else "nothing was written"
        if option is not None and not replace and isinstance(e, FileExistsError):
            raise OutputPathError(option, path, "was written by another program while this one "
                                                "worked, and is left as it is (--overwrite "
                                                "replaces it)") from None
        if option is None:           # the same OSError subclass and errno, naming the file
            raise named_os_error(e, path, kept) from None
        raise OutputPathError(option, path, f"write failed: {what} ({kept})") from None
    finally:
        try:
            if tmp.exists():
                tmp.unlink()
        except OSError:
            pass
    return path
