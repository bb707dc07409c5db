"""How many threads the BLAS under NumPy uses, set for the whole process through ctypes."""
from __future__ import annotations

import ctypes
import re


def set_blas_threads(n: int) -> bool:
    """Limit the BLAS under NumPy to `n` threads (OpenBLAS or MKL, found through ctypes).

    Small matrices gain nothing from BLAS threads, and on a busy 2-core machine OpenBLAS's spinning
    threads can make a tiny matmul 100x slower. Returns False when no known BLAS symbol was found.
    """
    paths = set()
    try:
        with open("/proc/self/maps") as f:
            paths = set(re.findall(r"(/\S*(?:openblas|mkl_rt)\S*\.so\S*)", f.read()))
    except OSError:
        pass
    names = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
             "openblas_set_num_threads64_", "openblas_set_num_threads", "MKL_Set_Num_Threads")
    done = False
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
        except OSError:
            continue
        for name in names:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(int(n))
                done = True
                break
    return done
