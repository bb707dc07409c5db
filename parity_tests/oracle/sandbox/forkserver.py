"""The oracle's side of the fork server (zygote.py): start it, ask it for a worker, follow that worker.

    proc, why = spawn(torch, scratch, env, limits, namespaces, stderr_fd, groups)
    # proc: a Forked (pid, stdin, stdout, poll(), wait()) like subprocess.Popen's, or None and why

One server per (torch, worker environment but HOME and TMPDIR) in this process, started on first
use as a fresh `python -I -B` (never a fork of this process), with that scrubbed environment (its
thread settings, read by NumPy and torch at import, are the workers'); it is
restarted when it died, and a start that failed is not tried again here. The worker it forks is
moved into its cgroups by this process before it may go on; a worker that could not be made as
confined as a fresh one (its namespaces refused, the server gone) is killed, and the caller starts
a fresh interpreter instead (parent.py). NPFORMER_ORACLE_NO_FORK_SERVER=1 turns the server off.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from .limits import Limits

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ZBOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from parity_tests.oracle.sandbox.zygote import serve; serve(sys.argv[2:] == ['torch'])")
START_S = 60.0          # for the server to import what it preloads
FORK_S = 20.0           # for one worker to be forked and confined
_LOCK = threading.Lock()
_SERVERS: dict = {}     # (torch, environment items) -> Server
_FAILED: dict = {}      # (torch, environment items) -> why its start failed
OWN = ("HOME", "TMPDIR")    # set per worker, to its scratch folder


class Server:
    def __init__(self, torch: bool, env: tuple):
        self.owner = os.getpid()
        home = tempfile.mkdtemp()       # for its imports only: removed once it is ready
        self.ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", ZBOOT, ROOT] + (["torch"] if torch else []),
            stdin=theirs, stdout=subprocess.DEVNULL, stderr=self.log, cwd="/",
            env={**dict(env), "HOME": home, "TMPDIR": home}, start_new_session=True,
            close_fds=True)
        theirs.close()
        line = _line(self.ctl, time.monotonic() + START_S)
        shutil.rmtree(home, ignore_errors=True)
        if not (isinstance(line, dict) and line.get("ready") and line.get("threads") == 1):
            self.close()
            raise OSError(f"the fork server did not start: {line or self._tail()}"[:300])

    def _tail(self) -> str:
        self.log.seek(0)
        return self.log.read()[-300:].decode("utf-8", "replace").strip() or "no message"

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.ctl.close()
        self.log.close()


EOF = "eof"


def _line(sock: socket.socket, deadline: float):
    """One message (JSON) from `sock`, a SOCK_SEQPACKET socket, whose messages are never merged or
    split; None when none came before the deadline, EOF when the other side closed it."""
    if not select.select([sock], [], [], max(deadline - time.monotonic(), 0.0))[0]:
        return None
    try:
        msg = sock.recv(1 << 16)
    except OSError:
        return EOF
    if not msg:
        return EOF
    try:
        return json.loads(msg)
    except ValueError:
        return None


class Forked:
    """A worker forked by the server, followed like a subprocess.Popen: pid (its process group),
    stdin/stdout (the protocol pipes), poll() and wait() from the server's report of its exit.
    Unlike Popen's, neither reaps it: its number stays taken until close_status()."""

    def __init__(self, pid: int, stdin_fd: int, stdout_fd: int, status: socket.socket):
        self.pidfd = os.pidfd_open(pid)     # first: it may fail, and then nothing is owned yet
        self.pid, self.status, self.returncode = pid, status, None
        self.stdin = open(stdin_fd, "wb", buffering=0)
        self.stdout = open(stdout_fd, "rb", buffering=0)
        self.lost = False               # the server died before it could say how this one ended

    def poll(self):
        if self.returncode is None:
            self._read(0.0)
        return self.returncode

    def _read(self, wait: float) -> None:
        line = _line(self.status, time.monotonic() + wait)
        if isinstance(line, dict) and isinstance(line.get("status"), int):
            st = line["status"]
            self.returncode = -os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)
        elif line == EOF and select.select([self.pidfd], [], [], wait)[0]:
            self.lost, self.returncode = True, 1      # ended, and the server is gone

    def wait(self, timeout: float | None = None):
        end = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.returncode is None:
            left = end - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("worker", timeout)
            self._read(min(left, 0.5))
        return self.returncode

    def close_status(self) -> None:
        """Let the server reap this worker: only once its process group was killed (by number)."""
        self.status.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1


_TORCH = re.compile(rb"^[ \t]*(import[ \t]+torch\b|from[ \t]+torch[ \t.])", re.M)


def _module_file(dotted: str, dirs: list[str]) -> str | None:
    """The source file of `package.module` under one of `dirs`, found without importing anything."""
    rel = os.path.join(*dotted.split("."))
    for d in dirs:
        for cand in (os.path.join(d, rel + ".py"), os.path.join(d, rel, "__init__.py")):
            if os.path.isfile(cand):
                return cand
    return None


def wants_torch(header: dict | None) -> bool:
    """Whether the submission a "prepare" names imports torch at the top of a line of its source
    (its file(s), its adapter) and torch is not forbidden: its worker comes from a server that has
    imported torch. Read as text, never run; a guess that misses only costs the import."""
    if not isinstance(header, dict) or header.get("op") != "prepare":
        return False
    if any(str(f).split(".")[0] == "torch" for f in header.get("forbidden") or ()):
        return False
    loc = str(header.get("spec", "")).rpartition(":")[0]
    files = []
    if loc.endswith(".py") or os.sep in loc or "/" in loc:
        files += loc.split(",")
    elif loc:
        dirs = [p for p in list(header.get("search_path") or []) + list(header.get("import_path")
                or []) if isinstance(p, str)] + [ROOT]
        files.append(_module_file(loc, dirs) or "")
    adapter = (header.get("options") or {}).get("adapter_path")
    files.append(adapter if isinstance(adapter, str) else "")
    for f in files:
        try:
            with open(f, "rb") as fh:
                if _TORCH.search(fh.read(1 << 20)):
                    return True
        except (OSError, ValueError):
            continue
    return False


def spawn(torch: bool, scratch: str, env: dict, limits: Limits,
          namespaces: bool, stderr_fd: int, groups: list) -> tuple[Forked | None, str]:
    if os.environ.get("NPFORMER_ORACLE_NO_FORK_SERVER") == "1":
        return None, "turned off (NPFORMER_ORACLE_NO_FORK_SERVER=1)"
    if not hasattr(os, "pidfd_open") or not hasattr(socket, "send_fds"):
        return None, "this Python or kernel lacks pidfd_open or send_fds"
    key = (bool(torch), tuple(sorted((k, v) for k, v in env.items() if k not in OWN)))
    with _LOCK:
        if any(s.owner != os.getpid() for s in _SERVERS.values()):
            _SERVERS.clear()            # a fork of the process that started them: never shared
        server = _SERVERS.get(key)
        if server is not None and not server.alive:      # it died: a fresh one
            _SERVERS.pop(key).close()
            server = None
        if server is None:
            if key in _FAILED:
                return None, _FAILED[key]
            try:
                server = _SERVERS[key] = Server(*key)
            except OSError as exc:
                _FAILED[key] = str(exc)
                return None, str(exc)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        req = {"scratch": scratch, "env": env, "namespaces": bool(namespaces),
               "limits": {"memory_mb": limits.memory_mb, "cpu_s": limits.cpu_s,
                          "file_mb": limits.file_mb}}
        try:
            socket.send_fds(server.ctl, [json.dumps(req).encode()],
                            [in_r, out_w, stderr_fd, theirs.fileno()])
            sent = True
        except OSError:
            sent = False
        for fd in (in_r, out_w):
            os.close(fd)
        theirs.close()
    proc = None
    try:
        got = _line(mine, time.monotonic() + FORK_S) if sent else None
        if not (isinstance(got, dict) and isinstance(got.get("pid"), int)):
            raise OSError(f"the fork server did not fork a worker: {got}")
        proc = Forked(got["pid"], in_w, out_r, mine)
        for g in groups:            # before it goes on: it runs nothing but the server's code yet
            g.add(proc.pid)
        mine.sendall(b"go")
        ok = _line(mine, time.monotonic() + FORK_S)
        if not (isinstance(ok, dict) and ok.get("ok")):
            raise OSError(f"the forked worker was not confined: {ok}")
        return proc, ""
    except OSError as exc:
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.stdin.close()
            proc.stdout.close()
            try:
                proc.wait(5.0)
            except subprocess.TimeoutExpired:
                pass
            proc.close_status()
        else:
            for fd in (in_w, out_r):
                os.close(fd)
            mine.close()
        return None, str(exc)[:300]


def shutdown() -> None:
    """Stop every server this process started (they also end by themselves when it does)."""
    with _LOCK:
        for s in _SERVERS.values():
            if s.owner == os.getpid():
                s.close()
        _SERVERS.clear()


atexit.register(shutdown)
