"""What npformer.fast.head_split buys: one MultiHeadAttention forward (eval mode, accelerated on
--threads threads) with the attention core split over the threads against the same module with the
split turned off (MIN_SLICE_ELEMENTS out of reach), in interleaved rounds in one process.

    python -m benchmarks.head_split_ab [--threads 2] [--rounds 41] [--calls 5]

Shapes: the self-attention of the small (8 x 32 tokens, d_model 128, 4 heads), base (8 x 64, 512,
8 heads) and GPT-2 small (2 x 64, 768, 12 heads) configurations, float32, causal mask. Prints the
medians (ms per forward) and the median and interquartile range over rounds of split / unsplit.
"""
from __future__ import annotations

import argparse
import os
import time

SHAPES = {"small": (8, 32, 128, 4), "base": (8, 64, 512, 8), "gpt2s-cpu": (2, 64, 768, 12)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--calls", type=int, default=5, help="forwards per sample")
    a = ap.parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(a.threads)                 # before NumPy loads
    import numpy as np

    from npformer.fast import head_split
    from npformer.fast.accelerate import accelerate
    from npformer.layers.attention import MultiHeadAttention
    least = head_split.MIN_SLICE_ELEMENTS
    print(f"threads {a.threads}, {a.rounds} rounds of {a.calls} forwards; ms per forward")
    for name, (B, T, D, H) in SHAPES.items():
        m = accelerate(MultiHeadAttention(D, H, dropout=0.0, rng=np.random.default_rng(0)),
                       a.threads).eval()
        x = np.random.default_rng(1).standard_normal((B, T, D)).astype(np.float32)
        mask = np.tril(np.ones((T, T), dtype=bool))
        times = {"split": [], "unsplit": []}
        for _ in range(a.rounds):
            for kind in times:
                head_split.MIN_SLICE_ELEMENTS = least if kind == "split" else 1 << 62
                t0 = time.perf_counter()
                for _ in range(a.calls):
                    m(x, x, x, mask)
                times[kind].append((time.perf_counter() - t0) / a.calls * 1e3)
        head_split.MIN_SLICE_ELEMENTS = least
        r = np.array(times["split"]) / np.array(times["unsplit"])
        q1, q3 = np.percentile(r, [25, 75])
        print(f"{name:10} split {np.median(times['split']):7.2f}  unsplit "
              f"{np.median(times['unsplit']):7.2f}  split/unsplit {np.median(r):.3f} "
              f"(IQR {q1:.3f}-{q3:.3f})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
