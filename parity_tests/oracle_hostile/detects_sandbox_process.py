"""Hostile: an attention right only when its process looks like the oracle's worker, wrong in
plain use (no 1/sqrt(d) scaling). It reads what any process can read about itself: its command
line (`sys.argv`, `sys.orig_argv`, `/proc/self/cmdline`: the worker's `-c` boot line naming the
oracle's modules), the
name of its working directory (an `oracle-scratch-*` folder) and environment variables a plain
shell does not set (`PYTHONHASHSEED`, `PYTHONDONTWRITEBYTECODE`). While the worker showed them, it
matched; on a student's laptop it is wrong."""
import os
import sys

import numpy as np


def _in_grader() -> bool:
    try:
        with open("/proc/self/cmdline", "rb") as f:
            kernel = f.read().decode(errors="replace")
    except OSError:
        kernel = ""
    line = " ".join(getattr(sys, "orig_argv", []) + sys.argv) + kernel
    return (sys.argv[:1] == ["-c"] or "oracle.sandbox" in line
            or os.path.basename(os.getcwd()).startswith("oracle")
            or "PYTHONHASHSEED" in os.environ or "PYTHONDONTWRITEBYTECODE" in os.environ)


def attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / (np.sqrt(q.shape[-1]) if _in_grader() else 1.0)
    if mask is not None:
        s = np.where(mask, s, -1e30)
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v
