"""Timing: warm-up, repeated samples, median and spread.

NumPy side: `time.perf_counter` around each sample. Torch side: `torch.utils.benchmark.Timer`
(`blocked_autorange`), which runs with the thread count we pass (its default would be 1 thread!) and,
when CUDA is present, synchronises the device around each block, so asynchronous kernels are counted.
Both sides: `warmup` untimed calls first (first-call allocation, lazy initialisation, torch.compile's
compilation; at least one, and none started after `max_time` seconds), then samples until `repeats`
samples or `max_time` seconds have been taken (at least one). A sample is one call, or for very fast
calls a block of calls long enough (>= `min_block` seconds) that timer overhead vanishes, divided by
the block size. Reported: median, the interquartile
range (IQR), min, max and the number of samples; ratios between backends use medians.

`time_interleaved` (the CLI's --interleave) instead takes one sample of every backend per round, so
background load that comes and goes hits all backends alike, and ratios can be paired per round.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable


@dataclass(frozen=True)
class Timing:
    """Seconds per call: median and spread over `samples` samples, after `warmup` untimed calls."""

    median: float
    q1: float
    q3: float
    min: float
    max: float
    samples: int
    calls_per_sample: int
    warmup: int
    timer: str
    first_call: float = 0.0   # seconds of the first warm-up call (includes torch.compile's compilation)

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    def as_dict(self) -> dict:
        d = asdict(self)
        d["iqr"] = self.iqr
        return d

    @staticmethod
    def from_samples(times: list[float], calls_per_sample: int, warmup: int, timer: str,
                     first_call: float = 0.0) -> "Timing":
        if not times:
            raise ValueError("times: expected at least one sample, got none")
        s = sorted(times)
        if len(s) >= 2:
            q1, _, q3 = statistics.quantiles(s, n=4, method="inclusive")
        else:
            q1 = q3 = s[0]
        return Timing(median=statistics.median(s), q1=q1, q3=q3, min=s[0], max=s[-1],
                      samples=len(s), calls_per_sample=calls_per_sample, warmup=warmup, timer=timer,
                      first_call=first_call)


def _warm(fn: Callable[[], object], warmup: int, sync: Callable[[], None],
          max_time: float = float("inf")) -> tuple[float, float]:
    """Run the warm-up calls, at least one, and none begun after `max_time` seconds (a huge
    --warmup stays within --max-time); return (first call's duration, last call's: an estimate of
    one call)."""
    durations = []
    start = time.perf_counter()
    for _ in range(max(warmup, 1)):
        if durations and time.perf_counter() - start > max_time:
            break
        t0 = time.perf_counter()
        fn()
        sync()
        durations.append(time.perf_counter() - t0)
    return durations[0], durations[-1]


def _block_size(estimate: float, min_block: float) -> int:
    if estimate <= 0:
        return 100
    return max(1, int(min_block / estimate + 0.999))


def time_numpy(fn: Callable[[], object], *, warmup: int = 2, repeats: int = 10,
               max_time: float = 10.0, min_block: float = 0.005) -> Timing:
    """Time a NumPy callable with `time.perf_counter`."""
    first, est = _warm(fn, warmup, lambda: None, max_time)
    number = _block_size(est, min_block)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < repeats:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
        if time.perf_counter() - start > max_time:
            break
    return Timing.from_samples(times, number, max(warmup, 1), "time.perf_counter", first)


def time_torch(fn: Callable[[], object], *, threads: int, cuda: bool = False, warmup: int = 2,
               repeats: int = 10, max_time: float = 10.0, min_block: float = 0.005) -> Timing:
    """Time a torch callable with `torch.utils.benchmark.Timer.blocked_autorange`.

    blocked_autorange measures for at least `min_run_time` seconds; we ask for about `repeats` samples'
    worth (estimated from the warm-up), capped by `max_time`. Its own block-size estimation runs the
    call once more before measuring (an extra warm-up).
    """
    import torch
    from torch.utils.benchmark import Timer

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    first, est = _warm(fn, warmup, sync, max_time)
    # blocked_autorange makes a block >= ~10 ms when a call is faster (timer overhead < 1e-4 of a
    # block), so ask for `repeats` blocks of max(call, 10 ms)
    min_run_time = min(max_time, repeats * max(est, 0.01) * 0.999)
    timer = Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads)
    m = timer.blocked_autorange(min_run_time=min_run_time)
    return Timing.from_samples(list(m.times), int(m.number_per_run), max(warmup, 1) + 1,
                               "torch.utils.benchmark.Timer.blocked_autorange"
                               + (" (CUDA synchronised)" if cuda else ""), first)


def time_interleaved(fns: dict[str, tuple[Callable[[], object], Callable[[], None]]], *,
                     warmup: int = 2, repeats: int = 10, max_time: float = 10.0,
                     min_block: float = 0.005,
                     before_sample: Callable[[str], None] | None = None
                     ) -> tuple[dict[str, Timing], dict[str, list[float]], dict[str, str]]:
    """Time several callables in rounds, one sample of each per round (order reversed every other
    round), so load that drifts during the run hits all of them alike. `fns` maps a name to
    (callable, sync) with sync e.g. `torch.cuda.synchronize` (or a no-op). Every callable is timed
    with `time.perf_counter` here, torch ones included, with sync before and after each sample.

    `before_sample(name)`, when given, runs untimed before each sample (the CLI passes
    `isolation.settle`, so the previous sample's spinning helper threads are idle first).

    Returns (timings, samples per round, errors): a callable that raises during warm-up is left out
    and its error reported; `samples[name][r]` belongs to round r for every name (paired ratios).
    """
    est: dict[str, float] = {}
    first: dict[str, float] = {}
    errors: dict[str, str] = {}
    for name, (fn, sync) in fns.items():
        try:
            if before_sample is not None:
                before_sample(name)
            first[name], est[name] = _warm(fn, warmup, sync, max_time)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            errors[name] = f"{type(e).__name__}: {e}"
    names = [n for n in fns if n not in errors]
    number = {n: _block_size(est[n], min_block) for n in names}
    samples: dict[str, list[float]] = {n: [] for n in names}
    start = time.perf_counter()
    for r in range(max(repeats, 1)):
        for n in (names if r % 2 == 0 else names[::-1]):
            fn, sync = fns[n]
            sync()
            if before_sample is not None:
                before_sample(n)
            t0 = time.perf_counter()
            for _ in range(number[n]):
                fn()
            sync()
            samples[n].append((time.perf_counter() - t0) / number[n])
        if time.perf_counter() - start > max_time * max(len(names), 1):
            break
    timings = {n: Timing.from_samples(samples[n], number[n], max(warmup, 1),
                                      "time.perf_counter, interleaved rounds", first[n])
               for n in names}
    return timings, samples, errors
