"""Root pytest setup: the suite runs single-threaded.

Every test works on tiny arrays, where BLAS/OpenMP threads only add synchronisation overhead (on a
busy 2-core machine a small matmul took 36 ms with 2 threads and 0.05 ms with 1). This runs before
any test module imports numpy or torch; a variable already set in the environment wins.
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
