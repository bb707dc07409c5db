"""Which product form OpenBLAS runs fastest at a model's Linear shapes: the open question behind a
faster Linear (different weight layouts) and behind the few-rows threshold of npformer.fast.linear.

    python -m benchmarks.gemm_forms                                  # base and gpt2s-cpu, 1 and 2 threads
    python -m benchmarks.gemm_forms --configs gpt2s-cpu --threads 1 --out DIR

For each Linear shape of a configuration's forward (rows = batch x length for the training and
forward workloads, rows = the generation batch for a decode step; the d_model x d_model, d_model x
d_ff, d_ff x d_model and d_model x vocab products), y = x W^T + b is timed four ways, in
interleaved rounds with the settle wait of benchmarks/isolation.py before every sample:

  x@W^T       npformer's Linear: W (out, in) C-contiguous, y = x @ W.T, then y += b
  (W@x^T)^T   the few-rows form of npformer.fast.linear: z = W @ x.T, y = z.T + b into a
              C-contiguous array (one pass for the copy and the bias)
  x@W_io      W kept as (in, out) C-contiguous (W.T copied once, outside the timing): y = x @ W_io
  W_F         W kept Fortran-ordered ((out, in) shape, (in, out) memory): y = x @ W.T, the plain
              line of code on a weight that a relayout would hand it
  torch       the same product by torch's own GEMM (torch.addmm on the same memory, torch at the
              same thread count; left out when torch is not installed): not a form npformer can
              use, but the ceiling of what any NumPy form can reach against the twin

After each configuration and thread count, the products of one forward are summed (per layer: 4
D->D projections in each attention block (the decoder's two blocks: 8), one D->F and one F->D; one
D->V output projection; every product at the forward's rows, the encoder's included, which matches
the benchmark configurations, whose source and target lengths are equal): x@W^T against torch. Since
the GEMMs are about 90 % of npformer's forward, that ratio bounds np-f32 / torchformer on the
forward from below. With torch installed, each forward shape's two backward products (those of
linear_backward: dx = dy @ W and dW = dy^T @ x) are timed the same way, NumPy against torch.mm on
the same memory, and one training step's products (forward, dx and dW of every Linear) are summed:
the same bound for np-f32 / torchformer on the training step, whose products are about 60-70 % of it.

Ratios are medians of per-round ratios against x@W^T (< 1: faster). The forms are the same dot
products; x@W^T and W_F call the same OpenBLAS kernel on the same packed panels and were bit-equal
on every shape tried here, the others agree to rounding (the bound in npformer/fast/linear.py).
The load on the machine is measured and printed: a loaded run's ratios are only indicative.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from benchmarks import load as load_meter
from benchmarks.ab_rounds import add_ab_arguments, interleave, paired_ratio, parsed_ab_arguments, write_results
from benchmarks.configs import CONFIGS

FORMS = ("x@W^T", "(W@x^T)^T", "x@W_io", "W_F", "torch")


def shapes(cfg) -> list[tuple[str, int, int, int]]:
    """(what, rows, in, out) of the configuration's Linear products."""
    f = cfg.model_fields
    D, F, V = f["d_model"], f["d_ff"], f["vocab_size"]
    rows = {"forward": cfg.batch * cfg.tgt_len, "decode step": cfg.gen_batch}
    out = []
    for what, n in rows.items():
        out += [(f"{what} D->D", n, D, D), (f"{what} D->F", n, D, F), (f"{what} F->D", n, F, D),
                (f"{what} D->V", n, D, V)]
    return out


def form_jobs(n: int, i: int, o: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, i)).astype(np.float32)
    W = rng.standard_normal((o, i)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    W_io = np.ascontiguousarray(W.T)                      # (in, out)
    W_F = np.asfortranarray(W)                            # (out, in) shape, (in, out) memory

    def plain():
        y = x @ W.T
        y += b
        return y

    def transposed():
        z = W @ x.T                                       # (out, n)
        return np.add(z.T, b, out=np.empty((n, o), dtype=z.dtype))

    def inout():
        y = x @ W_io
        y += b
        return y

    def fortran():
        y = x @ W_F.T
        y += b
        return y
    jobs = dict(zip(FORMS, (plain, transposed, inout, fortran)))
    try:
        import torch
    except ImportError:
        return jobs
    xt, Wt, bt = torch.from_numpy(x), torch.from_numpy(W), torch.from_numpy(b)
    jobs["torch"] = lambda: torch.addmm(bt, xt, Wt.T)
    return jobs


BACKWARD = ("dy@W", "torch dy@W", "dy^T@x", "torch dy^T@x")


_BW = {"x@W^T": ("dy@W", "dy^T@x"), "torch": ("torch dy@W", "torch dy^T@x")}


def backward_jobs(n: int, i: int, o: int, seed: int = 1) -> dict:
    """The two products of linear_backward at one shape, NumPy's and torch's on the same memory:
    dx = dy @ W (N, O) @ (O, I) and dW = dy^T @ x (O, N) @ (N, I). Empty without torch."""
    try:
        import torch
    except ImportError:
        return {}
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, i)).astype(np.float32)
    W = rng.standard_normal((o, i)).astype(np.float32)
    dy = rng.standard_normal((n, o)).astype(np.float32)
    xt, Wt, dyt = torch.from_numpy(x), torch.from_numpy(W), torch.from_numpy(dy)
    return dict(zip(BACKWARD, (lambda: dy @ W, lambda: torch.mm(dyt, Wt),
                               lambda: dy.T @ x, lambda: torch.mm(dyt.T, xt))))


def forward_counts(cfg) -> dict[str, int]:
    """How many of each product one forward makes (the decode-step products are not in a forward)."""
    f = cfg.model_fields
    enc, dec = f.get("num_encoder_layers", 6), f.get("num_decoder_layers", 6)
    attn = 4 * enc + (8 if cfg.model == "seq2seq" else 4) * dec
    return {"forward D->D": attn, "forward D->F": enc + dec, "forward F->D": enc + dec,
            "forward D->V": 1}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gemm_forms", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ab_arguments(p, configs="base,gpt2s-cpu", repeats=15, threads_help="BLAS thread counts")
    args = p.parse_args(argv)
    from npformer.training.blas import set_blas_threads

    names, thread_counts = parsed_ab_arguments(p, args)

    try:
        import torch  # before the first block sets its threads
    except ImportError:
        torch = None
    print("median ms of y = x W^T + b per form; ratios: medians of per-round ratios to x@W^T",
          flush=True)
    before = load_meter.sample(1.0)
    meter = load_meter.LoadMeter()
    results = []
    for cname in names:
        cfg = CONFIGS[cname]
        print(f"\n{cfg.describe()}", flush=True)
        for t in thread_counts:
            set_blas_threads(t)
            print(f"  {t} thread(s)", flush=True)
            if torch is not None:
                torch.set_num_threads(t)                  # the torch column at the same threads
            total, counts = {"x@W^T": 0.0, "torch": 0.0}, forward_counts(cfg)
            step = dict.fromkeys(total, 0.0)
            for what, n, i, o in shapes(cfg):
                res = interleave(form_jobs(n, i, o), args.repeats, max_time=20.0)
                ratios = {k: paired_ratio(res, k, FORMS[0], "wall_samples") for k in FORMS[1:] if k in res}
                for k in total:
                    total[k] += counts.get(what, 0) * res.get(k, {"wall_ms": np.nan})["wall_ms"]
                cells = "  ".join(f"{k}/x@W^T {r:.3f}" for k, r in ratios.items())
                print(f"  {what:>18} {n:5d} x {i:5d} -> {o:6d}  x@W^T {res[FORMS[0]]['wall_ms']:9.3f}"
                      f" ms  {cells}", flush=True)
                results.append({"config": cname, "threads": t, "what": what, "rows": n, "in": i,
                                "out": o, "wall_ms": {k: v["wall_ms"] for k, v in res.items()},
                                "ratio_to_plain": ratios})
                if what.startswith("forward") and torch is not None:
                    bw = interleave(backward_jobs(n, i, o), args.repeats, max_time=20.0)
                    for k in total:                       # a training step: forward, dx and dW
                        step[k] += counts[what] * (res[k]["wall_ms"] + bw[_BW[k][0]]["wall_ms"]
                                                   + bw[_BW[k][1]]["wall_ms"])
                    cells = "  ".join(f"{k} {bw[k]['wall_ms']:.3f} ms" for k in BACKWARD)
                    print(f"  {'backward':>18} {n:5d} x {i:5d} -> {o:6d}  {cells}", flush=True)
                    results.append({"config": cname, "threads": t, "what": "backward of " + what,
                                    "rows": n, "in": i, "out": o,
                                    "wall_ms": {k: v["wall_ms"] for k, v in bw.items()}})
            if np.isfinite(total["torch"]):
                print(f"  one forward's products: numpy x@W^T {total['x@W^T']:.1f} ms, torch "
                      f"{total['torch']:.1f} ms: numpy / torch {total['x@W^T'] / total['torch']:.3f}",
                      flush=True)
                results.append({"config": cname, "threads": t, "what": "one forward's products",
                                "wall_ms": total, "ratio_numpy_to_torch":
                                total["x@W^T"] / total["torch"]})
                print(f"  one training step's products (forward, dx, dW): numpy {step['x@W^T']:.1f} ms, "
                      f"torch {step['torch']:.1f} ms: numpy / torch "
                      f"{step['x@W^T'] / step['torch']:.3f}", flush=True)
                results.append({"config": cname, "threads": t, "what": "one training step's products",
                                "wall_ms": step, "ratio_numpy_to_torch":
                                step["x@W^T"] / step["torch"]})
    stamp = load_meter.summarize(before, meter.others(), load_meter.sample(1.0))
    print(f"\n{stamp['stamp']}")
    if args.out:
        path = write_results(args.out, {"results": results, "load": stamp, "argv": sys.argv[1:]})
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
