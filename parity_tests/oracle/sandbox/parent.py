"""The parent side: one worker process per submission, spoken to in plain data, killed at every end.

    w = Worker(limits)                       # nothing started yet
    head, arrays = w.request({"op": "prepare", ...}, {}, timeout=60)   # starts the child if needed
    ...
    w.close()                                # kill the process group, remove the scratch directory

A request either returns the child's (header, arrays) or raises:
    ChildDied(message)   the child exited or was killed (os._exit, a signal, a limit) - `crashed`
    ChildTimeout(s)      no complete answer within the deadline - `timeout`; the group is killed
    ProtocolError        the answer breaks the format - `crashed` too (the child is killed)
After any of these the worker is dead; the next request starts a fresh one (the caller re-sends its
"prepare"). The child is forked by a fork server (forkserver.py: a fresh `python -I -B` that ran no
submission code) or, where that cannot be used, is a fresh interpreter; never a fork of this
process. Either way it is in its own session and process group, cwd an empty scratch directory, a
scrubbed environment (limits.child_env) and resource limits (limits.Limits); its argv holds only
the project root.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import forkserver
from .confine import MemoryCgroup, PidsCgroup, namespace_prefix
from .limits import Limits, child_env
from .protocol import MAX_PAYLOAD, Closed, Deadline, ProtocolError, Reader, encode, write_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
        "from parity_tests.oracle.sandbox.child import main; main()")
MAX_PIDS = 256              # processes + threads of one worker, where a pids cgroup can be made
LIVE: set[int] = set()      # pids of workers alive in this process (tests check it empties)
STARTED: list[int] = []     # every worker pid (= its process group id) ever started here


class ChildDied(Exception):
    pass


class ChildTimeout(Exception):
    def __init__(self, seconds: float):
        super().__init__(f"no answer within {seconds:g} s")
        self.seconds = seconds


class Worker:
    def __init__(self, limits: Limits | None = None, threads: int | None = None):
        self.limits = limits or Limits()
        self.threads = threads
        self.proc: subprocess.Popen | None = None
        self.scratch: str | None = None
        self.errlog = None
        self.reader: Reader | None = None
        self.cgroup: PidsCgroup | None = None
        self.memcg: MemoryCgroup | None = None
        self.starts = 0
        self.hello = False                      # the fresh worker's first message not read yet
        self.confinement: dict = {}             # what the worker's kernel confinement is

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, header: dict | None = None) -> None:
        """A fresh worker: forked by the fork server (forkserver.py) when it can be confined as a
        fresh interpreter is, else a fresh interpreter; `header`, the request it starts for, says
        whether the submission imports torch (a server that preloaded it then)."""
        self.close()
        self.scratch = tempfile.mkdtemp()     # a plain name: no "oracle" for the submission to see
        self.errlog = tempfile.TemporaryFile()          # the parent's own file, not in the scratch dir
        prefix, why = namespace_prefix()
        self.confinement = {"namespaces": bool(prefix)} if prefix else \
            {"namespaces": False, "namespaces_reason": why}
        self.cgroup = PidsCgroup.make(MAX_PIDS)
        self.confinement["pids_max"] = MAX_PIDS if self.cgroup is not None else None
        self.memcg = MemoryCgroup.make(self.limits.memory_mb)
        self.confinement["memory_mb_total"] = self.limits.memory_mb if self.memcg else None
        groups, limits = [g for g in (self.cgroup, self.memcg) if g is not None], self.limits
        env = child_env(self.scratch, self.threads)
        torch = forkserver.wants_torch(header)
        self.proc, why = forkserver.spawn(torch, self.scratch, env, limits, bool(prefix),
                                          self.errlog.fileno(), groups)
        self.confinement["fork_server"] = ("torch" if torch else "numpy") if self.proc else False
        if self.proc is None:
            self.confinement["fork_server_reason"] = why
            self.proc = self._fresh(prefix, env, groups)
        LIVE.add(self.proc.pid)
        STARTED.append(self.proc.pid)
        os.set_blocking(self.proc.stdin.fileno(), False)
        self.reader = Reader(self.proc.stdout.fileno())
        self.starts += 1
        self.hello = False

    def _fresh(self, prefix: list, env: dict, groups: list) -> subprocess.Popen:
        limits = self.limits

        def preexec() -> None:
            limits.apply()
            for g in groups:
                g.enter()

        return subprocess.Popen(
            prefix + [sys.executable, "-I", "-B", "-c", BOOT, ROOT], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.errlog, cwd=self.scratch, env=env,
            preexec_fn=preexec, start_new_session=True, close_fds=True)

    def request(self, header: dict, arrays: dict | None, timeout: float, stages: int = 1,
                max_reply: int = MAX_PAYLOAD):
        """Send one request; `timeout` seconds per stage: the child sends a {"op": "tick"} after
        each stage it finishes (at most stages - 1 of them count), then its answer, whose arrays
        may not declare more than `max_reply` bytes (refused before any is read)."""
        if not self.alive:
            self.start(header)
        deadline = time.monotonic() + timeout
        try:
            if not self.hello:      # sent before the submission exists in the worker: trusted
                h, _ = self.reader.read(max(deadline, time.monotonic() + 60.0))
                if h.get("op") != "hello" or not isinstance(h.get("confinement"), dict):
                    raise ProtocolError("the worker did not start properly")
                self.confinement.update({str(k)[:40]: v for k, v in h["confinement"].items()
                                         if isinstance(v, (bool, int, str, list, type(None)))})
                self.hello = True
                deadline = time.monotonic() + timeout
            write_all(self.proc.stdin.fileno(), encode(header, arrays), deadline)
            first = True
            for _ in range(stages + 8):
                h, a = self.reader.read(deadline, max_reply)
                if h.get("op") != "tick":
                    return h, a
                if header.get("op") == "prepare" and first and isinstance(h.get("confinement"), dict):
                    c = h["confinement"]       # sent before the submission was loaded
                    self.confinement.update({str(k)[:40]: v for k, v in c.items()
                                             if isinstance(v, (bool, int, str, type(None)))})
                    for key in ("unreadable", "writes_only_in"):
                        self.confinement[key] = [str(x)[:300] for x in (c.get(key) or [])
                                                 if isinstance(x, str)][:20]
                    first = False
                    continue
                stages -= 1
                if stages > 0:
                    deadline = time.monotonic() + timeout
            raise ProtocolError("too many progress messages")
        except Deadline:
            self.close()
            raise ChildTimeout(timeout) from None
        except Closed:
            why = self._death()
            self.close()
            raise ChildDied(why) from None
        except ProtocolError:
            self.close()
            raise

    def _death(self) -> str:
        """How the child ended (waits briefly for its exit status), with the tail of its stderr."""
        code = None
        try:
            code = self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            pass
        if code is None:
            how = "closed its end of the pipe"
        elif code < 0:
            try:
                how = f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        elif code > 128 and self.confinement.get("namespaces"):
            try:                                   # its init reports a signal as 128 + number
                how = f"was killed by signal {signal.Signals(code - 128).name}"
            except ValueError:
                how = f"exited with status {code}"
        else:
            how = f"exited with status {code}"
        if getattr(self.proc, "lost", False):
            how = "ended (the fork server that started it died before saying how)"
        tail = self.stderr_tail()
        return f"the submission's process {how}" + (f"; its last output: {tail}" if tail else "")

    def stderr_tail(self, n: int = 1500) -> str:
        if self.errlog is None:
            return ""
        try:
            self.errlog.seek(0, os.SEEK_END)
            size = self.errlog.tell()
            self.errlog.seek(max(0, size - n))
            return self.errlog.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        """Kill the whole process group (forks, threads and all), reap, remove the scratch dir."""
        p = self.proc
        if p is not None:
            try:
                os.killpg(p.pid, signal.SIGKILL)   # before reaping: the pgid cannot be reused yet
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            if isinstance(p, forkserver.Forked):
                p.close_status()
            for f in (p.stdin, p.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            LIVE.discard(p.pid)
            self.proc = None
        for g in (self.cgroup, self.memcg):  # whatever left the group (setsid, double fork) too
            if g is not None:
                g.kill()
                g.remove()
        self.cgroup = self.memcg = None
        if self.errlog is not None:
            self.errlog.close()
            self.errlog = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass
