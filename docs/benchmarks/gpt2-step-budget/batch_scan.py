"""GPT-2 small's fast training step (np-f32 as `python -m benchmarks` builds it, 1 thread) at several
batches of 64-token rows, in interleaved rounds: CPU time of the step against the CPU time of a
square float32 product (n = 2048) timed in the same rounds, so each batch's share of the peak is
read from the same minutes of the machine.

    OPENBLAS_NUM_THREADS=1 python docs/benchmarks/gpt2-step-budget/batch_scan.py [--batches 2,4,8]

FLOPs of a step: benchmarks.flops.step_flops, the benchmark's own count (95.8 GFLOP at 2 x 64).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchmarks.files import new_output_problem, write_json


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", default="2,4,8")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.out and (problem := new_output_problem(args.out)):    # before minutes of measuring
        ap.error(problem)
    from benchmarks.backends import np_model
    from benchmarks.configs import get_config
    from benchmarks.flops import step_flops
    from npformer.fast.accelerate import accelerate
    from npformer.fast.fused_adam import FusedAdam
    from npformer.fast.linear import use_few_rows_linear
    from npformer.layers.loss import CrossEntropyLoss

    bc = get_config("gpt2s-cpu")
    model = use_few_rows_linear(np_model(bc.model, bc.transformer_config("float32")))
    loss = CrossEntropyLoss()
    accelerate(model, 1)
    accelerate(loss, 1)
    opt = FusedAdam(model.named_parameters(), lr=1e-4, threads=1)
    rng = np.random.default_rng(0)
    batches = [int(b) for b in args.batches.split(",")]

    def step(B: int):
        ids = rng.integers(0, bc.model_fields["vocab_size"], size=(B, 65))

        def run():
            model.zero_grad()
            loss.forward(model.forward(ids[:, :-1]), ids[:, 1:])
            model.backward(loss.backward())
            opt.step()
        return run

    a = rng.standard_normal((2048, 2048), dtype=np.float32)
    fns = {f"{B} x 64": step(B) for B in batches}
    fns["square n=2048"] = lambda: a @ a
    cpu = {n: [] for n in fns}
    load0 = os.getloadavg()
    for r in range(args.rounds + 1):
        for n, fn in (fns.items() if r % 2 == 0 else list(fns.items())[::-1]):
            c = time.process_time()
            fn()
            if r:
                cpu[n].append(time.process_time() - c)
    load1 = os.getloadavg()
    med = {n: float(np.median(v)) for n, v in cpu.items()}
    peak = 2.0 * 2048 ** 3 / med["square n=2048"] / 1e9
    print(f"load average {load0[0]:.2f} -> {load1[0]:.2f}; peak (CPU time) {peak:.1f} GFLOP/s")
    out = {"load": [load0, load1], "peak_gflops": peak, "cpu_median_s": med, "cpu_samples_s": cpu}
    for B in batches:
        s = med[f"{B} x 64"]
        gf = step_flops(bc.transformer_config("float32"), bc.model, "train_step", B, 0, 64) / s / 1e9
        print(f"batch {B} x 64: step {1e3 * s:7.0f} ms CPU, {gf:5.1f} GFLOP/s, {100 * gf / peak:4.1f} % of peak")
    if args.out:
        write_json(args.out, out)                     # whole or not at all (benchmarks/files.py)


if __name__ == "__main__":
    main()
