"""GPT-2 small's (gpt2s-cpu: 2 x 64 tokens) training step, part by part, on one thread.

    OPENBLAS_NUM_THREADS=1 python docs/benchmarks/gpt2-step-budget/budget.py [--rounds 9] [--out F]

Times, in interleaved rounds (one sample of each item per round, medians over rounds):
  - every Linear product of the step by shape: forward x @ W.T, backward dx = g @ W and
    dW = g.T @ x, each weighted by how often the step runs it (48 D x D, 12 D -> F, 12 F -> D,
    one D -> V for the tied output projection);
  - square float32 products (n = 1024, 2048): the BLAS's own best on this core;
  - the tied embedding's gradient as the plain layer makes it (a dense (V, D) array of zeros, the
    scatter-add of 128 rows) and its addition into the output projection's gradient (grad += dW);
  - FusedAdam's step on the model's parameter shapes (what np-f32's train_step runs after backward);
  - a streaming copy and add (memory bandwidth, as benchmarks.load measures it).
Every figure printed is CPU time of this process (one thread: the work's own time, which the other
processes of a shared machine inflate less than wall time); the load average before and after is
printed too; --out writes the CPU and wall medians and samples as JSON.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchmarks.files import new_output_problem, write_json

N, D, F, V = 128, 768, 3072, 50257        # rows (2 x 64), d_model, d_ff, vocabulary
LINEARS = (("D->D", D, D, 48), ("D->F", F, D, 12), ("F->D", D, F, 12), ("D->V", V, D, 1))


def _products(rng, N=N):
    items = {}
    for name, O, I, count in LINEARS:
        W = rng.standard_normal((O, I), dtype=np.float32)
        x = rng.standard_normal((N, I), dtype=np.float32)
        g = rng.standard_normal((N, O), dtype=np.float32)
        flops = 2.0 * N * O * I
        items[f"{name} fwd x@W.T"] = (lambda x=x, W=W: x @ W.T, flops, count)
        items[f"{name} fwd (W@x.T).T"] = (lambda x=x, W=W: np.ascontiguousarray((W @ x.T).T),
                                           flops, 0)
        items[f"{name} dx g@W"] = (lambda g=g, W=W: g @ W, flops, count)
        items[f"{name} dW g.T@x"] = (lambda g=g, x=x: g.T @ x, flops, count)
    for n in (1024, 2048):
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        items[f"square n={n}"] = (lambda a=a, b=b: a @ b, 2.0 * n ** 3, 0)
    return items


def _others(rng):
    from benchmarks.optimizer import parameter_shapes
    from npformer.fast.fused_adam import FusedAdam
    from npformer.layers.embedding import embedding_backward, embedding_forward
    from npformer.layers.module import Parameter

    items = {}
    table = rng.standard_normal((V, D), dtype=np.float32)
    ids = rng.integers(0, V, size=(2, 64))
    _, cache = embedding_forward(ids, table)
    dout = rng.standard_normal((2, 64, D), dtype=np.float32)
    grad = rng.standard_normal((V, D), dtype=np.float32)
    items["embedding dW (dense zeros + add.at)"] = (lambda: embedding_backward(dout, cache), 0, 1)
    dW = embedding_backward(dout, cache)
    items["tied grad += embedding dW"] = (lambda: grad.__iadd__(dW), 0, 1)
    shapes = parameter_shapes("gpt2s-cpu")
    params = []
    for i, s in enumerate(shapes):
        p = Parameter((rng.standard_normal(s, dtype=np.float32) * 0.02))
        p.grad = rng.standard_normal(s, dtype=np.float32)
        params.append((str(i), p))
    opt = FusedAdam(params, lr=1e-4, threads=1)
    items["FusedAdam step"] = (opt.step, 0, 1)
    a = np.ones(128 * 2 ** 18, dtype=np.float32)
    b = np.empty_like(a)
    items["bandwidth copy+add 128 MiB"] = (lambda: (np.copyto(b, a), b.__iadd__(a)), 0, 0)
    n_params = sum(int(np.prod(s)) for s in shapes)
    return items, n_params, a.nbytes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out")
    ap.add_argument("--rows", type=int, default=N, help="rows of every product (2 x 64 = 128)")
    ap.add_argument("--products-only", action="store_true", help="no Adam, embedding, bandwidth")
    args = ap.parse_args()
    if args.out and (problem := new_output_problem(args.out)):    # before minutes of measuring
        ap.error(problem)
    rng = np.random.default_rng(0)
    items = _products(rng, args.rows)
    n_params = bw_bytes = 0
    if not args.products_only:
        others, n_params, bw_bytes = _others(rng)
        items.update(others)
    load0 = os.getloadavg()
    samples = {k: [] for k in items}
    wall = {k: [] for k in items}
    for r in range(args.rounds + 1):                        # round 0: warm-up, not kept
        for k, (fn, _, _) in items.items():
            reps = 5 if k.startswith("D->D") or k.startswith("square n=1024") else 1
            c, t = time.process_time(), time.perf_counter()
            for _ in range(reps):
                fn()
            if r:
                samples[k].append((time.process_time() - c) / reps)
                wall[k].append((time.perf_counter() - t) / reps)
    load1 = os.getloadavg()
    med = {k: float(np.median(v)) for k, v in samples.items()}
    wmed = {k: float(np.median(v)) for k, v in wall.items()}
    peak = max(items[k][1] / med[k] for k in items if k.startswith("square")) / 1e9
    print("CPU time of this process (other processes' load inflates it less than wall time), "
          "median over rounds; wall-time medians in the JSON")
    print(f"rows {args.rows}")
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f}; rounds {args.rounds}")
    print(f"peak (best square float32 median): {peak:.1f} GFLOP/s")
    total_ms = total_gf = 0.0
    for k, (_, flops, count) in items.items():
        ms = 1e3 * med[k]
        iqr = 1e3 * (np.percentile(samples[k], 75) - np.percentile(samples[k], 25))
        line = f"{k:38s} {ms:9.2f} ms (IQR {iqr:.2f})"
        if flops:
            gf = flops / med[k] / 1e9
            line += f"  {gf:6.1f} GFLOP/s {100 * gf / peak:5.1f} %  x{count}"
            if count:
                line += f" -> {ms * count:7.1f} ms/step"
                total_ms += ms * count
                total_gf += flops * count / 1e9
        print(line)
    print(f"Linear products per step: {total_gf:.1f} GFLOP in {total_ms:.0f} ms "
          f"= {total_gf / total_ms * 1e3:.1f} GFLOP/s ({100 * total_gf / total_ms * 1e3 / peak:.1f} % of peak)")
    doc = {"rows": args.rows, "cpu_medians_s": med, "cpu_samples_s": samples,
           "wall_medians_s": wmed, "wall_samples_s": wall, "peak_gflops": peak,
           "load": [load0, load1]}
    if not args.products_only:
        bw = 5 * bw_bytes / med["bandwidth copy+add 128 MiB"] / 1e9
        adam_bytes = 7 * 4 * n_params
        print(f"bandwidth {bw:.1f} GB/s; Adam moves {adam_bytes / 1e9:.2f} GB ({n_params} "
              f"parameters; 7 array passes) -> {adam_bytes / med['FusedAdam step'] / 1e9:.1f} GB/s "
              f"achieved, {1e3 * adam_bytes / bw / 1e9:.0f} ms at that bandwidth")
        doc["bandwidth_gbs"] = bw
    if args.out:
        write_json(args.out, doc)                     # whole or not at all (benchmarks/files.py)


if __name__ == "__main__":
    main()
