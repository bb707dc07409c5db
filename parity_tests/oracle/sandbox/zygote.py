"""The fork server: a fresh, trusted interpreter that has imported what every worker needs, and forks
one worker per request (forkserver.py is the oracle's side).

    python -I -B -c ZBOOT ROOT [torch]       # started by forkserver.Server, never a fork of the oracle

It runs no submission code, ever. At start it imports NumPy, the worker's own modules (child.main's)
and, when asked, torch; then it answers on fd 0 (a Unix SOCK_SEQPACKET socket to the oracle: one
message per request or reply) one request at a time:

    request:  JSON {"scratch", "env", "limits", "namespaces"} + four fds by SCM_RIGHTS:
              the worker's stdin (read end), stdout (write end), stderr (the oracle's log file)
              and a status socket, on which the rest is said:
    server -> {"pid": N} once forked          oracle -> b"go" once N is in the worker's cgroups
    worker -> {"ok": true} | {"error": ...}   server -> {"status": WAIT_STATUS} once N ended

N is reaped only once the oracle has closed its end of the status socket (after killing N's process
group by number): until then N's number cannot be given to another process or group.

The forked process (W0) makes itself what parent.py's `unshare ... python -I -B` is: its own session,
fds 0/1/2 the three given and no other open, the scrubbed environment, the scratch folder as cwd,
the rlimits (limits.Limits.apply). It waits for "go", so no line of the worker runs outside its
cgroups. Every global RNG the fork copied is reseeded and the modules this server imported for its
own use (socket...) leave sys.modules. With "namespaces" it then does what `unshare --user
--map-root-user --mount --pid --net --fork --kill-child --mount-proc` does (namespaces.py) and its
child, PID 1 of the new namespaces, says "ok" and runs child.main; without, W0 runs child.main.
The hash seed is the server's (Python fixes it at start): one check's runs share one anyway.
"""
from __future__ import annotations

import os
import sys


def _preload(torch: bool) -> tuple[frozenset, frozenset]:
    """Import what a worker imports before the submission loads; torch last, when asked. Returns
    (modules of a fresh worker at that point, modules torch added)."""
    import importlib.util  # noqa: F401

    import numpy  # noqa: F401

    from ..reading import package_import  # noqa: F401
    from . import child, confine, plain, policy, protocol, session, sources, tamper, view  # noqa: F401
    harness = frozenset(sys.modules)
    if torch:
        import torch as _torch  # noqa: F401
    return harness, frozenset(sys.modules) - harness


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _become_worker(req: dict, fds: list[int], status, keep: frozenset, torch_mods: frozenset,
                   held: list) -> None:
    """In the forked W0: never returns (os._exit). `held`: the server's sockets (its control
    socket, the other workers' status sockets), let go of here without a trace of them."""
    import json
    import signal
    code = 127
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        stdin, stdout, stderr, _ = fds
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        go = os.dup(status.fileno())
        os.set_inheritable(go, False)
        os.closerange(3, go)
        os.closerange(go + 1, 1 << 16)
        for sock in held:
            sock.detach()                         # its fd is closed: no object may close it again
        held.clear()
        from .limits import Limits
        lim = req.get("limits") or {}
        Limits(memory_mb=int(lim["memory_mb"]), cpu_s=int(lim["cpu_s"]),
               file_mb=int(lim["file_mb"])).apply()
        os.chdir(req["scratch"])
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in req["env"].items()})
        import tempfile
        tempfile.tempdir = None
        if os.read(go, 64) != b"go":              # the oracle moved this pid into its cgroups
            os._exit(126)
        for name in set(sys.modules) - keep - torch_mods:
            del sys.modules[name]                 # this server's own modules (socket...)
        _reseed()

        def report(text: str) -> None:
            os.write(go, json.dumps({"ok": True} if text == "ok" else
                                    {"error": str(text)[:200]}).encode() + b"\n")

        if req.get("namespaces"):
            from .namespaces import unshare_worker
            unshare_worker(report)                # returns in PID 1 of the new namespaces only
        else:
            report("ok")
        os.close(go)
        from . import child
        child.PRELOADED = torch_mods
        child.main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001
        import traceback
        traceback.print_exc()
    os._exit(code)


def _reseed() -> None:
    """Fresh global RNG states: nothing a previous worker could have seen or set carries over."""
    import random
    import secrets

    import numpy as np
    random.seed(secrets.randbits(64))
    np.random.seed(secrets.randbits(32))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(secrets.randbits(63))


def serve(torch: bool) -> None:
    keep, torch_mods = _preload(torch)
    import json
    import select
    import signal
    import socket
    ctl = socket.socket(fileno=os.dup(0))
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    poll = select.poll()
    children = _Children(poll)
    poll.register(ctl, select.POLLIN)
    poll.register(wake_r, select.POLLIN)
    ctl.sendall(json.dumps({"ready": True, "threads": _threads(),
                            "torch": "torch" in sys.modules}).encode() + b"\n")
    while True:
        ready = dict(poll.poll())
        if wake_r in ready:
            os.read(wake_r, 4096)
            children.report()
        for pid, sock in list(children.items()):
            if ready.get(sock.fileno(), 0) & (select.POLLHUP | select.POLLRDHUP | select.POLLERR):
                children.release(pid)
        if ctl.fileno() not in ready:
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(ctl, 1 << 16, 8)
        except OSError:
            msg, fds = b"", []
        if not msg:
            os._exit(0)                          # the oracle closed its end: nothing more to fork
        status = socket.socket(fileno=fds[3]) if len(fds) == 4 else None
        try:
            req = json.loads(msg.decode())
            if status is None or _threads() != 1:
                raise OSError("fork refused: " + ("not single-threaded" if status else "bad fds"))
            pid = os.fork()
            if pid == 0:
                held = [ctl, status, *children.values()]
                children.forget()
                _become_worker(req, fds, status, keep, torch_mods, held)
            children.add(pid, status)
            status.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        except (OSError, ValueError) as exc:
            if status is not None:
                try:
                    status.sendall(json.dumps({"error": str(exc)[:200]}).encode() + b"\n")
                except OSError:
                    pass
                status.close()
        finally:
            for fd in (fds if status is None else fds[:3]):
                os.close(fd)


def _wait_status(info) -> int:
    """The waitpid status word of a waitid result."""
    if info.si_code == os.CLD_EXITED:
        return (info.si_status & 0xFF) << 8
    return info.si_status | (0x80 if info.si_code == os.CLD_DUMPED else 0)


class _Children(dict):
    """The workers this server forked (pid -> status socket). A worker that ended is told about
    (its status) but not reaped: its pid, and so its process group's number, stays taken until the
    oracle, which kills that group by number, has closed the status socket (release), so no
    `killpg` of the oracle can reach a group that reused the number."""

    def __init__(self, poll):
        super().__init__()
        self.poll, self.ended, self.released = poll, set(), set()

    def add(self, pid: int, sock) -> None:
        import select
        self[pid] = sock
        self.poll.register(sock, select.POLLRDHUP)   # its closing only: "go" is the worker's

    def forget(self) -> None:
        """In a forked worker: nothing of the other workers (their pids) is kept."""
        self.clear()
        self.ended.clear()
        self.released.clear()

    def report(self) -> None:
        for pid in [p for p in self if p not in self.ended]:
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = None
            if info is None:
                continue
            self.ended.add(pid)
            if pid in self.released:
                self._reap(pid)
                continue
            try:
                self[pid].sendall(b'{"status": %d}\n' % _wait_status(info))
            except OSError:
                pass

    def release(self, pid: int) -> None:
        self.poll.unregister(self[pid])
        self.released.add(pid)
        if pid in self.ended:
            self._reap(pid)
        else:
            self.report()                # reaped now if it ended, else when it does

    def _reap(self, pid: int) -> None:
        self.pop(pid).close()
        self.ended.discard(pid)
        self.released.discard(pid)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
