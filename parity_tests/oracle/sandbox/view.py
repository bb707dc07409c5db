"""The worker's view of the file system: only what it needs, listed (never a deny-list).

Inside the worker's own user + mount + PID namespaces (confine.namespace_prefix), before Landlock
(a Landlocked process may not mount) and before a line of the submission runs:

    info = private_view(keep=[...], scratch=os.getcwd(), scratch_mb=256)

builds a new root on a size-capped tmpfs holding bind mounts of the paths in `keep` only (the
interpreter and its libraries, the system's /usr, /lib*, /bin, /etc, /sys; the submission's own
folder; the few harness files the worker runs), a fresh /proc of the worker's PID namespace, a
minimal /dev (null, zero, full, random, urandom) and an empty /tmp holding the scratch folder at
the same path as outside; then pivot_root()s into it and detaches the old root. What is not listed
does not exist for the worker: the rest of the project (its .git, its candidates, the docs), the
oracle's working directory, the spec, other students' folders, other processes (the host /proc),
host unix sockets (/run, /tmp, /var/run...), the home folders.

Returns {"view": True, "kept": [...]} or {"view": False, "view_reason": ...}; on failure nothing
of the half-built view is used (the worker goes on with Landlock only, and the report says so).
"""
from __future__ import annotations

import ctypes
import os
import sys

from .writable_copy import COPY_BYTES, copy_tree

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 16384, 1 << 18
_MNT_DETACH = 2
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
DEVICES = ("null", "zero", "full", "random", "urandom")


def python_paths(exclude: tuple[str, ...]) -> list[str]:
    """The interpreter's own folders and every existing sys.path entry (real paths), except those
    equal to or above a folder in `exclude` (which would show it whole)."""
    cands = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))]
    cands += [p for p in sys.path if isinstance(p, str) and p]
    out = []
    for p in cands:
        r = os.path.realpath(p)
        if not os.path.exists(r):
            continue
        if any(x == r or x.startswith(r.rstrip(os.sep) + os.sep) for x in exclude):
            continue
        out.append(r)
    return sorted(set(out))


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _mount(libc, src, target, fstype, flags, data=None) -> None:
    _check(libc.mount(os.fsencode(src) if src else None, os.fsencode(target),
                      os.fsencode(fstype) if fstype else None, ctypes.c_ulong(flags),
                      data.encode() if data else None), f"mount {target}")


def _bind(libc, path: str, new_root: str) -> None:
    target = new_root + path
    if os.path.islink(path):                     # /lib -> usr/lib: the same link in the view
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            os.symlink(os.readlink(path), target)
        return
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "wb").close()
    _mount(libc, path, target, None, _MS_BIND | _MS_REC)


def _pivot(libc, new_root: str) -> None:
    fn = getattr(libc, "pivot_root", None)
    if fn is not None:
        rc = fn(os.fsencode(new_root), os.fsencode(new_root))
    else:
        nr = _SYS_PIVOT_ROOT.get(os.uname().machine)
        if nr is None:
            raise OSError("pivot_root: unknown system call number on this architecture")
        rc = libc.syscall(ctypes.c_long(nr), os.fsencode(new_root), os.fsencode(new_root))
    _check(rc, "pivot_root")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def private_view(keep: list[str], scratch: str, scratch_mb: int, hide: tuple = (),
                 writable: tuple = ()) -> dict:
    """Replace this process's root by a view of `keep` (see the module docstring). `hide`: folders
    (the project root, the oracle's working directory) that must not show even where a kept
    folder holds them (a project checked out under /usr): an empty tmpfs covers them, and only
    the kept paths beneath them are bound again. `writable`: kept folders (the submission's own)
    copied onto the view's tmpfs instead of bound, where they fit (writable_copy.py); the copies
    made are returned as "writable"."""
    libc = _libc()
    keep = sorted({os.path.abspath(k) for k in keep if k and os.path.lexists(k)},
                  key=lambda p: (p.count(os.sep), p))
    hide = tuple(sorted({os.path.realpath(h) for h in hide if h and os.path.isdir(h)}))
    writable = {os.path.abspath(w) for w in writable if w}
    new_root, mounted, placed, copied = scratch, False, [], []     # an empty folder of ours

    def place(path: str) -> None:
        # a folder asked to be writable is copied only where nothing bound lies above it (the
        # copy then lands on our tmpfs, never in a bound host folder), else it is bound as before;
        # nothing is bound inside a copy (Landlock's write right on the copy would reach through)
        if any(_under(path, c) for c in copied):
            return
        if path in writable and not any(_under(path, p) for p in placed) \
                and copy_tree(path, new_root + path):
            copied.append(path)
        else:
            _bind(libc, path, new_root)
        placed.append(path)
    try:
        _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)       # nothing propagates out
        _mount(libc, "tmpfs", new_root, "tmpfs", _MS_NOSUID | _MS_NODEV,
               f"size={int(scratch_mb)}m,mode=0755")
        mounted = True
        inner = [p for p in keep if any(_under(p, h) for h in hide)]
        for path in keep:
            if path not in inner:
                place(path)
        for h in hide:
            if os.path.isdir(new_root + h):          # shown through a kept folder above it
                _mount(libc, "tmpfs", new_root + h, "tmpfs", _MS_NOSUID | _MS_NODEV,
                       f"size={COPY_BYTES >> 20}m")      # room for a writable copy beneath
        for path in inner:
            place(path)
        os.makedirs(new_root + "/proc", exist_ok=True)
        _mount(libc, "proc", new_root + "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        os.makedirs(new_root + "/dev", exist_ok=True)
        for d in DEVICES:
            if os.path.exists("/dev/" + d):
                _bind(libc, "/dev/" + d, new_root)
        os.makedirs(new_root + "/dev/shm", mode=0o1777, exist_ok=True)
        os.makedirs(new_root + "/tmp", mode=0o1777, exist_ok=True)
        os.makedirs(new_root + scratch, mode=0o700, exist_ok=True)
        os.chdir(new_root)
        _pivot(libc, ".")
        _check(libc.umount2(b".", ctypes.c_int(_MNT_DETACH)), "detaching the old root")
        os.chdir(scratch)
    except OSError as exc:
        if mounted:       # never leave system folders bound inside the (writable) scratch folder
            libc.umount2(os.fsencode(new_root), ctypes.c_int(_MNT_DETACH))
        os.chdir(scratch)
        return {"view": False, "view_reason": str(exc)[:200]}
    return {"view": True, "kept": keep, "writable": copied}
