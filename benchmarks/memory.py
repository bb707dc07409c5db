"""Peak memory of one call, per backend, measured the same way wherever the tools allow.

The figure: the peak of bytes allocated during one call above what was allocated when it started
(activations kept for backward, temporaries, gradients, optimiser state created on first use).
Parameters that exist before the call are not in it; they are reported separately as parameter bytes.
Measured once, after timing (the tools slow the call down), on an already warmed-up call.

  numpy (npformer)  `tracemalloc`: NumPy reports its data buffers to it, so the traced peak minus the
                    traced size at the start is the call's peak array allocation.
  torch on CPU      `torch.profiler` with `profile_memory=True`: every allocation/free of the CPU
                    allocator during the call, in time order; the running sum's maximum is the peak.
                    (Uses the profiler's event tree, `experimental_event_tree`; if a torch version
                    drops it, the figure is reported as unavailable rather than guessed.)
  torch on CUDA     `torch.cuda.max_memory_allocated()` after `reset_peak_memory_stats()`, minus
                    `memory_allocated()` at the start (the caching allocator's exact counters).
ru_maxrss is not used: it is a process-lifetime high-water mark, so after the first backend it says
nothing about the next one.
"""
from __future__ import annotations

import tracemalloc
from typing import Any, Callable


def numpy_peak(fn: Callable[[], object]) -> dict[str, Any]:
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return {"peak_bytes": int(peak - start), "method": "tracemalloc peak - start"}


def torch_cpu_peak(fn: Callable[[], object]) -> dict[str, Any]:
    method = "torch.profiler(profile_memory) allocation events: max running sum"
    try:
        from torch._C._profiler import _EventType
        from torch.profiler import ProfilerActivity, profile
    except ImportError as e:  # pragma: no cover - torch without the profiler internals
        return {"peak_bytes": None, "method": method, "error": str(e)}
    try:
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            fn()
        events: list[tuple[int, int]] = []
        stack = list(prof.profiler.kineto_results.experimental_event_tree())
        while stack:
            e = stack.pop()
            if e.tag == _EventType.Allocation and str(e.extra_fields.device).startswith("cpu"):
                events.append((e.start_time_ns, int(e.extra_fields.alloc_size)))
            stack.extend(e.children)
    except Exception as e:  # noqa: BLE001 - private profiler API: report, never crash the run
        return {"peak_bytes": None, "method": method, "error": f"{type(e).__name__}: {e}"}
    events.sort()
    running = peak = 0
    for _, size in events:
        running += size
        peak = max(peak, running)
    return {"peak_bytes": int(peak), "method": method}


def torch_cuda_peak(fn: Callable[[], object]) -> dict[str, Any]:
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return {"peak_bytes": int(torch.cuda.max_memory_allocated() - start),
            "method": "torch.cuda.max_memory_allocated - memory_allocated at start"}


def measure_peak(fn: Callable[[], object], kind: str) -> dict[str, Any]:
    """kind: "numpy", "torch-cpu" or "torch-cuda"."""
    if kind == "numpy":
        return numpy_peak(fn)
    if kind == "torch-cpu":
        return torch_cpu_peak(fn)
    if kind == "torch-cuda":
        return torch_cuda_peak(fn)
    raise ValueError(f"kind: expected 'numpy', 'torch-cpu' or 'torch-cuda', got {kind!r}")
