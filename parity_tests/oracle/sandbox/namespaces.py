"""What `unshare --user --map-root-user --mount --pid --net --fork --kill-child --mount-proc` does,
done in-process (ctypes) by a worker the fork server forked (zygote.py), where the command cannot be
used because the worker is not a fresh program.

    unshare_worker(report)     # returns in PID 1 of the new namespaces; the caller (W0) never returns

The caller must be single-threaded (a fresh fork is). W0 makes the user, mount, PID and network
namespaces, maps its own uid and gid to 0 in them, makes every mount private, then forks PID 1 and
waits for it, ending as it ended (its exit status, or the same signal), as `unshare --fork` does.
PID 1 dies when W0 dies (PR_SET_PDEATHSIG, --kill-child) and mounts its own /proc. `report(text)`
is called in PID 1 once all this is done ("ok"), or with the failure in whichever process met it.
"""
from __future__ import annotations

import ctypes
import os
import signal

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
PR_SET_PDEATHSIG = 1


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def unshare_worker(report) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    try:
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET), "unshare")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
        _check(libc.mount(b"none", b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None),
               "making mounts private")
        pid = os.fork()
    except OSError as exc:
        report(f"namespaces: {exc}")
        os._exit(126)
    if pid == 0:
        try:
            _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
            libc.mount(b"none", b"/proc", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None)
            _check(libc.mount(b"proc", b"/proc", b"proc",
                              ctypes.c_ulong(MS_NOSUID | MS_NODEV | MS_NOEXEC), None),
                   "mounting /proc")
        except OSError as exc:
            report(f"namespaces: {exc}")
            os._exit(126)
        report("ok")
        return
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)                          # the pipes belong to the worker alone
    os.closerange(3, 1 << 16)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    if os.WIFEXITED(status):
        os._exit(os.WEXITSTATUS(status))
    sig = os.WTERMSIG(status)
    if sig not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)
