"""How loaded the machine was: measured before, during and after a run, stamped on every output.

Two figures:
  load average   the kernel's 1-minute load average (os.getloadavg): it counts our own threads too,
                 so at the end of a run it mostly shows the run itself; recorded, not judged.
  others' CPU    CPU time other processes used, in cores: the machine's busy time (/proc/stat) minus
                 this process's own (os.times, children included), over a wall-clock interval. Before
                 and after the run it is sampled while this process sleeps; during the run it is the
                 whole run's average. This is what steals cores from the measured backends.
A run is stamped LOADED when other processes used more than `LOADED_CORES` cores in any of the three.

Neither figure sees the other tenants of a shared (virtual) host: their memory traffic slows this
machine's memory-bound work (an optimizer step, elementwise passes) and shows in no counter of the
guest. So each sample also times memory bandwidth from Python (`memory_bandwidth`: a copy and an add
over arrays larger than any cache, one thread), and the stamp says when it moved by more than
`BANDWIDTH_MOVED` between the start and the end of a run: read that run's times as a range.
"""
from __future__ import annotations

import datetime
import os
import time
from typing import Any

LOADED_CORES = 0.25     # other processes' average use, in cores, above which a run counts as loaded
BANDWIDTH_MOVED = 0.2   # a change of memory bandwidth, start to end, above which the stamp says so


def _proc_stat_busy() -> tuple[float, int] | None:
    """(busy CPU seconds of the whole machine, CPUs listed) from /proc/stat; None off Linux."""
    try:
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    head = lines[0].split()
    if head[0] != "cpu":
        return None
    vals = [int(v) for v in head[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)          # idle + iowait
    guest = sum(vals[8:10]) if len(vals) > 9 else 0             # already counted in user/nice
    cpus = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    return (sum(vals) - idle - guest) / os.sysconf("SC_CLK_TCK"), cpus


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class LoadMeter:
    """Marks a start point; `others()` is the other processes' CPU use since then, in cores."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.busy0 = _proc_stat_busy()
        self.own0 = _own_cpu()

    def others(self) -> float | None:
        busy = _proc_stat_busy()
        wall = time.perf_counter() - self.t0
        if busy is None or self.busy0 is None or wall <= 0:
            return None
        used = (busy[0] - self.busy0[0]) - (_own_cpu() - self.own0)
        return round(max(used, 0.0) / wall, 2)


def loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # pragma: no cover - not available on this platform
        return None


def memory_bandwidth(mib: int = 128, rounds: int = 3) -> float | None:
    """GB/s of `b[:] = a; b += a` over two float32 arrays of `mib` MiB (5 array passes), the best
    of `rounds` after one untimed round (which pays the page faults); None if numpy is missing."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        return None
    a = np.ones(mib * 2 ** 18, dtype=np.float32)                # mib MiB
    b = np.empty_like(a)
    best = float("inf")
    for i in range(rounds + 1):
        t = time.perf_counter()
        np.copyto(b, a)                                         # read a, write b
        b += a                                                  # read a and b, write b
        if i:
            best = min(best, time.perf_counter() - t)
    return round(5 * a.nbytes / best / 1e9, 1)


def sample(seconds: float = 1.0, bandwidth: bool = True) -> dict[str, Any]:
    """Sleep `seconds` and report what the rest of the machine did meanwhile; then, unless
    bandwidth=False, time the memory bandwidth (about 0.2 s)."""
    m = LoadMeter()
    time.sleep(seconds)
    busy = _proc_stat_busy()
    out = {"load_average_1min": loadavg(), "other_processes_cores": m.others(),
           "cpus": busy[1] if busy else os.cpu_count(), "seconds": seconds,
           "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    if bandwidth:
        out["memory_gb_s"] = memory_bandwidth()
    return out


def bandwidth_note(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, bool]:
    """("; memory bandwidth X -> Y GB/s ...", whether it moved by more than BANDWIDTH_MOVED)."""
    x, y = before.get("memory_gb_s"), after.get("memory_gb_s")
    if not x or not y:
        return "", False
    moved = abs(y - x) / max(x, y) > BANDWIDTH_MOVED
    return (f"; memory bandwidth {x:g} -> {y:g} GB/s"
            + (" (MOVED: other tenants of the host? read memory-bound times as a range)"
               if moved else "")), moved


def summarize(before: dict[str, Any], during: float | None, after: dict[str, Any]) -> dict[str, Any]:
    """The JSON stamp: the three measurements, whether the run counts as loaded, and one line."""
    figures = [before.get("other_processes_cores"), during, after.get("other_processes_cores")]
    known = [f for f in figures if f is not None]
    loaded = bool(known) and max(known) > LOADED_CORES
    fmt = lambda v: "?" if v is None else f"{v:.2f}"  # noqa: E731
    line = (f"{'LOADED' if loaded else 'idle'}: other processes used {fmt(figures[0])} cores before, "
            f"{fmt(during)} during, {fmt(figures[2])} after (of {before.get('cpus')}); load average "
            f"{before.get('load_average_1min')} -> {after.get('load_average_1min')}; "
            f"{before.get('utc', '?')[:16].replace('T', ' ')} UTC")
    note, moved = bandwidth_note(before, after)
    return {"before": before, "during_other_processes_cores": during, "after": after,
            "loaded": loaded, "threshold_cores": LOADED_CORES, "bandwidth_moved": moved,
            "stamp": line + note}
