"""Where npformer's forward spends the MAIN thread's CPU time, by category: benchmarks.profiling with
its per-function clock switched from wall time to time.thread_time (less sensitive to other
processes' load; a BLAS worker thread's share is not counted).

    PYTHONPATH=. python docs/benchmarks/forward-head-split/profile_cpu_time.py CONFIG THREADS STEPS
"""
import sys
import time
import types

import benchmarks.profiling as P

P.time = types.SimpleNamespace(perf_counter=time.thread_time)   # every clock of the profiler
cfg, thr, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
p = P.profile_workload(cfg, "forward", "np-f32", steps, thr, with_cprofile=False)
print(cfg, thr, " | ".join(f"{c['category'][:22]} {c['seconds'] * 1e3:.1f}"
                           for c in p["by_category"] if c["seconds"] * 1e3 > 0.3))
