"""Run N worker processes of one multi-process training run and stop every one of them together.

    run_workers(argv, nproc)      start `argv` nproc times with the rendezvous environment torchrun
                                  --standalone sets (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
                                  MASTER_PORT); returns 0 when every worker ends with 0, raises
                                  WorkerFailed (one line) when one does not, and on any exception
                                  in the caller (Ctrl-C, SIGTERM turned into an exception) stops
                                  every worker before re-raising
    watch_launcher()              in a worker: exit when the launcher has gone (never an orphan)

Why not torchrun: killed with SIGKILL (what `subprocess.call` does on an exception) it leaves its
workers running as orphans that hold the caller's stdout; stopped with a signal, it and its workers
print pages of tracebacks. Here the workers run in their own session (a terminal's Ctrl-C reaches the
launcher only, which then stops them), and their stderr goes through the launcher: after the first
failure or interruption, what the workers still write is dropped, so the user reads one line saying
what happened instead of every process's traceback. A Ctrl-C or SIGTERM while the workers run is
held until the launcher's next poll (`_HeldSignals`) and raised there by the caller's own handler:
raised anywhere, it could land inside the relay while a lock of its queue is held, and the
launcher would then hang, holding the caller's output, after stopping its workers.
"""
from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["run_workers", "WorkerFailed", "watch_launcher", "LAUNCHER_PID_ENV"]

LAUNCHER_PID_ENV = "NPFORMER_LAUNCHER_PID"
_HOLD_S = 0.3           # workers' stderr is shown this late, so a peer's echo of a failure is not
_TICK_S = 0.05          # how often the workers are polled (well under _HOLD_S)


class WorkerFailed(RuntimeError):
    """A worker ended with a non-zero status; the others were stopped. `code` is the exit status
    to return (the worker's own, or 1 when a signal killed it); `said` tells whether the worker
    printed its own one-line error (status 2: then the caller prints nothing more)."""

    def __init__(self, message: str, code: int, said: bool):
        super().__init__(message)
        self.code, self.said = code, said


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _describe(rank: int, nproc: int, status: int) -> str:
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"worker {rank} of {nproc} was killed by {name}"
    return f"worker {rank} of {nproc} exited with status {status}"


class _Relay:
    """Copies the workers' stderr to ours, each chunk _HOLD_S after it came."""

    def __init__(self, procs):
        self.q: queue.Queue = queue.Queue()
        self.pending: list[tuple[float, int, bytes]] = []
        self.threads = [threading.Thread(target=self._read, args=(r, p.stderr), daemon=True)
                        for r, p in enumerate(procs)]
        for t in self.threads:
            t.start()

    def _read(self, rank: int, stream) -> None:
        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.q.put((time.monotonic(), rank, chunk))

    def _drain(self) -> None:
        while True:
            try:
                self.pending.append(self.q.get_nowait())
            except queue.Empty:
                return

    def flush(self, ranks=None, older_than: float | None = _HOLD_S) -> None:
        """Write the chunks of the workers in `ranks` (None: all) that came at least `older_than`
        seconds ago (None: all of them); the other workers' chunks stay pending."""
        self._drain()
        now, keep = time.monotonic(), []
        out = getattr(sys.stderr, "buffer", None)
        for t, rank, chunk in self.pending:
            if (ranks is None or rank in ranks) and (older_than is None or now - t >= older_than):
                if out is not None:
                    out.write(chunk)
                else:
                    sys.stderr.write(chunk.decode(errors="replace"))
            else:
                keep.append((t, rank, chunk))
        self.pending = keep
        sys.stderr.flush()

    def finish(self, ranks=None) -> None:
        """The workers have ended: wait for the readers, show everything the workers in `ranks`
        (None: all) wrote, drop the rest."""
        for t in self.threads:
            t.join(timeout=5)
        self.flush(ranks, older_than=None)
        self.pending = []


class _HeldSignals:
    """While the workers run: SIGINT and SIGTERM are recorded, not acted on; `raise_held()`, called
    where the launcher is between two steps, puts the caller's handlers back and delivers the first
    signal held to them (Ctrl-C's KeyboardInterrupt, or what the caller made of SIGTERM). Outside the
    main thread (where Python allows no handler) nothing is held."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.held: list[int] = []
        self.old: dict = {}

    def hold(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self.old[s] = signal.signal(s, lambda signum, frame: self.held.append(signum))

    def restore(self) -> None:
        for s, handler in self.old.items():
            signal.signal(s, handler)
        self.old = {}

    def raise_held(self) -> None:
        if self.held:
            self.restore()
            signal.raise_signal(self.held[0])       # the caller's handler runs here, at a safe point


def _stop(procs, grace: float) -> None:
    """SIGTERM to every live worker, then SIGKILL to those still alive after `grace` seconds."""
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
            except OSError:
                pass
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run_workers(argv: list[str], nproc: int, *, env: dict | None = None,
                grace: float = 10.0) -> int:
    """Run `argv` as `nproc` workers of one process group (see the module docstring)."""
    if not isinstance(nproc, int) or nproc < 1:
        raise ValueError(f"nproc: expected an int >= 1, got {nproc!r}")
    base = dict(os.environ if env is None else env, MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(_free_port()), WORLD_SIZE=str(nproc), LOCAL_WORLD_SIZE=str(nproc),
                GROUP_RANK="0")
    base[LAUNCHER_PID_ENV] = str(os.getpid())
    procs: list[subprocess.Popen] = []
    relay = None
    signals = _HeldSignals()
    try:
        for r in range(nproc):
            procs.append(subprocess.Popen(argv, env=dict(base, RANK=str(r), LOCAL_RANK=str(r)),
                                          stderr=subprocess.PIPE, start_new_session=True))
        relay = _Relay(procs)
        signals.hold()
        while True:
            signals.raise_held()
            codes = [p.poll() for p in procs]
            bad = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                # a worker killed by a signal is the cause; its peers' errors only echo it
                r, c = min(bad, key=lambda rc: (rc[1] >= 0, rc[0]))
                _stop(procs, grace)
                relay.finish({r} if c > 0 else set())
                raise WorkerFailed(_describe(r, nproc, c) + "; the other workers were stopped",
                                   c if c > 0 else 1, said=c == 2)
            if all(c == 0 for c in codes):
                relay.finish(None)
                return 0
            relay.flush()
            time.sleep(_TICK_S)
    except BaseException:
        signals.restore()
        _stop(procs, grace)
        if relay is not None:
            relay.finish(set())                   # interrupted: the workers' echoes are dropped
        raise
    finally:
        signals.restore()
        for p in procs:
            if p.stderr is not None:
                p.stderr.close()


def watch_launcher(interval: float = 1.0) -> None:
    """In a worker started by run_workers: a daemon thread that ends this process (status 143)
    when the launcher is gone, so a launcher killed with SIGKILL leaves no orphan training on."""
    pid = os.environ.get(LAUNCHER_PID_ENV)
    if not pid or not pid.isdigit():
        return
    launcher = int(pid)

    def watch() -> None:
        while True:
            if os.getppid() != launcher:
                os._exit(143)
            time.sleep(interval)

    threading.Thread(target=watch, daemon=True, name="watch-launcher").start()
