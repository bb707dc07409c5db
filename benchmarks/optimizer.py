"""What the fused Adam buys: the optimizer's part of a training step, three ways, in interleaved rounds.

    python -m benchmarks.optimizer --config base --threads 1,2
    python -m benchmarks.optimizer --config gpt2s-cpu --threads 1,2      # 124M parameters: ~6 GB

On the parameter shapes of a benchmark configuration's npformer model (float32, random gradients),
each sample is what the training loop does after backward:

  plain     clip_grad_norm(params, 1.0), then npformer.optim.Adam.step()     (the code a learner reads)
  blocked   clip_grad_norm(params, 1.0), then npformer.fast.adam.BlockedAdam  (cache blocks, threads)
  fused     clip_coefficient(params, 1.0), then FusedAdam.step(grad_scale=coef): clipping inside the
            one pass (npformer.fast.fused_adam)
  .grad copy   the copy of every gradient into `.grad` that npformer.fast.adopt_grad removes (one
            np.copyto per parameter): the time adoption saves in a real step

All three update the same way bit for bit (tests/npformer/fast). At each thread count (the BLAS's,
for the norm, and the optimizer's worker threads) the variants are timed in rounds, one sample of
each per round, the previous sample's helper threads idle first (benchmarks/isolation.py); ratios
are medians of per-round ratios. Peak memory: tracemalloc's peak above the start during one step.
The machine's load is measured before, during and after, and printed with the table.
"""
from __future__ import annotations

import argparse
import os
import sys
import tracemalloc
from typing import Any

import numpy as np

from benchmarks.files import write_json

VARIANTS = ("plain", "blocked", "fused", ".grad copy")


def parameter_shapes(config: str) -> list[tuple[int, ...]]:
    """The shapes of the configuration's npformer model's distinct parameters."""
    from benchmarks.backends import np_model
    from benchmarks.configs import get_config

    bc = get_config(config)
    model = np_model(bc.model, bc.transformer_config("float32"))
    return [p.data.shape for _, p in model.named_parameters()]


def _setup(shapes, threads: int, seed: int = 0) -> dict[str, Any]:
    from npformer.fast.adam import BlockedAdam
    from npformer.fast.fused_adam import FusedAdam, clip_coefficient
    from npformer.layers.module import Parameter
    from npformer.optim import Adam, clip_grad_norm

    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s, dtype=np.float32) * 0.02 for s in shapes]
    grads = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    fns: dict[str, Any] = {}
    for name, cls in (("plain", Adam), ("blocked", BlockedAdam), ("fused", FusedAdam)):
        ps = [Parameter(a.copy()) for a in init]
        for p, g in zip(ps, grads):
            p.grad = g.copy()
        named = [(str(i), p) for i, p in enumerate(ps)]
        opt = cls(named, lr=1e-4) if cls is Adam else cls(named, lr=1e-4, threads=threads)
        if name == "fused":
            fns[name] = (lambda o=opt, n=named: o.step(grad_scale=clip_coefficient(n, 1.0)[1]))
        else:
            fns[name] = (lambda o=opt, q=ps: (clip_grad_norm(q, 1.0), o.step()))
    dst = [np.empty_like(g) for g in grads]
    fns[".grad copy"] = lambda: [np.copyto(d, g) for d, g in zip(dst, grads)]
    return fns


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        fn()
        return int(tracemalloc.get_traced_memory()[1] - start)
    finally:
        tracemalloc.stop()


def measure(shapes, threads: int, repeats: int, warmup: int = 1) -> dict[str, Any]:
    from benchmarks.isolation import settle
    from benchmarks.timing import time_interleaved
    from npformer.training.blas import set_blas_threads

    set_blas_threads(threads)
    fns = _setup(shapes, threads)
    timings, samples, errors = time_interleaved(
        {n: (f, lambda: None) for n, f in fns.items()}, warmup=warmup, repeats=repeats,
        max_time=600.0, before_sample=lambda _: settle())
    if errors:
        raise RuntimeError(f"benchmarks.optimizer: {errors}")
    paired = lambda a, b: float(np.median([x / y for x, y in zip(samples[a], samples[b])]))  # noqa: E731
    return {"threads": threads,
            "median_ms": {n: 1e3 * timings[n].median for n in fns},
            "iqr_ms": {n: 1e3 * timings[n].iqr for n in fns},
            "samples": {n: len(samples[n]) for n in fns},
            "fused_vs_plain": paired("fused", "plain"), "fused_vs_blocked": paired("fused", "blocked"),
            "blocked_vs_plain": paired("blocked", "plain"),
            "peak_mib": {n: _peak_bytes(fns[n]) / 2**20 for n in ("plain", "blocked", "fused")}}


def format_results(doc: dict[str, Any]) -> str:
    lines = [f"optimizer step on {doc['config']}'s {doc['parameters']:,} float32 parameters "
             f"({doc['tensors']} tensors), clipping included; {doc['load']['stamp']}",
             f"{'threads':>7} " + " ".join(f"{v + ' ms':>14}" for v in VARIANTS)
             + f" {'fused/plain':>11} {'fused/blocked':>13} {'peak MiB plain/blocked/fused':>29}"]
    for r in doc["runs"]:
        ms, iq, pk = r["median_ms"], r["iqr_ms"], r["peak_mib"]
        lines.append(f"{r['threads']:>7} " + " ".join(f"{ms[v]:>8.1f} ±{iq[v]:>4.0f}" for v in VARIANTS)
                     + f" {r['fused_vs_plain']:>11.2f} {r['fused_vs_blocked']:>13.2f} "
                     + f"{pk['plain']:>13.1f} / {pk['blocked']:.1f} / {pk['fused']:.1f}")
    lines.append("ratios: medians of per-round ratios (< 1: fused faster); ± IQR; the .grad copy "
                 "column is the pass adopted gradients skip (not part of the three steps)")
    if doc["load"]["loaded"]:
        lines.append("WARNING: measured on a LOADED machine: rerun on an idle one before quoting")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.argtypes import int_at_least, int_list
    from benchmarks.configs import CONFIGS

    p = argparse.ArgumentParser(prog="python -m benchmarks.optimizer",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="base", choices=sorted(CONFIGS),
                   help="whose parameter shapes (default: %(default)s)")
    p.add_argument("--threads", type=int_list, default=[1, 2], help="thread counts (default 1,2)")
    p.add_argument("--repeats", type=int_at_least(1), default=9, help="rounds (default 9)")
    p.add_argument("--out", default=None, help="also write OUT/optimizer.json")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the file(s) an earlier run left in --out")
    args = p.parse_args(argv)
    from benchmarks.load import LoadMeter, sample, summarize
    from npformer.io.files import check_output_dir

    if args.out:
        try:
            check_output_dir(args.out, "--out", writes=["optimizer.json"], overwrite=args.overwrite)
        except ValueError as e:
            p.error(str(e))
    shapes = parameter_shapes(args.config)
    before, meter = sample(), LoadMeter()
    runs = []
    for t in args.threads:
        print(f"[optimizer] {args.config}, {t} thread(s) ...", file=sys.stderr, flush=True)
        runs.append(measure(shapes, t, args.repeats))
    load = summarize(before, meter.others(), sample())
    doc = {"config": args.config, "parameters": int(sum(np.prod(s) for s in shapes)),
           "tensors": len(shapes), "repeats": args.repeats, "load": load, "runs": runs,
           "command": "python -m benchmarks.optimizer " + " ".join(argv if argv is not None
                                                                   else sys.argv[1:])}
    print(format_results(doc))
    if args.out:
        write_json(os.path.join(args.out, "optimizer.json"), doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
