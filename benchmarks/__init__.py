"""Benchmarks: npformer (explicit NumPy) vs torchformer (PyTorch CPU/CUDA) vs stock torch.nn.

Run `python -m benchmarks --help`. Same model, same inputs, one run: timings (median and spread after
warm-up), FLOPs per step from a stated formula (`benchmarks.flops`), achieved GFLOP/s as a fraction of
the machine's matmul peak measured in the same run (`benchmarks.peak`), peak memory per backend
(`benchmarks.memory`), sequence-length and d_model sweeps (`benchmarks.sweeps`).

This package file imports nothing heavy on purpose: `python -m benchmarks` must be able to fix the
BLAS/OpenMP thread counts (environment variables) before NumPy or torch is first imported.
"""

__all__ = ["main"]


def main(argv=None) -> int:
    """Entry point of `python -m benchmarks` (see benchmarks/cli.py)."""
    from benchmarks.cli import main as _main

    return _main(argv)
