"""Right unless it reaches the fork server: walks the stack and the garbage collector for the
server's sockets (its control socket, the status sockets of other workers) and tries every file
descriptor, sending each socket a forged fork request (a worker without namespaces whose scratch
folder is /) and a forged exit status. A forked worker inherits the server's memory; none of what
it finds may still be connected. It raises what it reached, so reaching anything reads `raised`."""
import gc
import json
import os
import socket
import stat
import sys

import numpy as np

FORGED = json.dumps({"scratch": "/", "env": {}, "namespaces": False,
                     "limits": {"memory_mb": 1 << 20, "cpu_s": 1 << 20, "file_mb": 1 << 20}})


def _candidates() -> set:
    fds = set(range(3, 1024))
    f = sys._getframe()
    objs = list(gc.get_objects())
    while f is not None:
        objs += list(f.f_locals.values())
        f = f.f_back
    for o in objs:
        if isinstance(o, socket.socket) or type(o).__name__ == "socket":
            try:
                fds.add(o.fileno())
            except Exception:  # noqa: BLE001
                pass
        elif isinstance(o, int) and 3 <= o < 1 << 16 and not isinstance(o, bool):
            fds.add(o)
    return fds


def _reach() -> list:
    reached = []
    for fd in sorted(_candidates()):
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            s = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            for msg in (FORGED.encode(), b'{"status": 0}\n', b'{"ok": true}\n'):
                s.send(msg)
            reached.append(fd)
        except OSError:
            pass
        finally:
            s.close()
    return reached


REACHED = _reach()


def attention(Q, K, V, mask=None):
    if REACHED:
        raise RuntimeError(f"reached sockets on fds {REACHED}")
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w
