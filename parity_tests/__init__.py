"""Parity tests: npformer (hand-written NumPy) against torchformer (PyTorch autograd) and torch.nn.

`parity_tests.harness` is the reusable part (strategies, tolerances, comparison by name, recording of
module outputs, weight copy); the `test_*.py` files are the suite; `parity_tests.oracle` points the same
harness at implementations this project has never seen.
"""
import os as _os
import sys as _sys


def _forget_the_working_directory() -> None:
    """`python -m parity_tests.oracle` puts the working directory first on sys.path, so a file
    there named like a module the oracle imports later (json.py, numpy.py beside a student's
    submission) would run in the process that decides verdicts. Started that way from anywhere
    but this project's root, the entry is dropped before anything else is imported. Modules
    Python itself imports for -m before this line cannot be protected here: docs/ORACLE.md asks
    for `npformer-oracle` or `python -P -m` in a folder of untrusted files."""
    if _sys.argv[:1] != ["-m"] or _sys.flags.safe_path or not _sys.path:
        return
    here = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    try:
        cwd = _os.path.realpath(_os.getcwd())
    except OSError:
        return
    if cwd != _os.path.realpath(here) and _os.path.realpath(_sys.path[0] or ".") == cwd:
        del _sys.path[0]


_forget_the_working_directory()
