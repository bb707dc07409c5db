"""Thread scaling: npformer (plain and data-parallel) and torchformer at 1, 2, ..., all cores, one run.

    python -m benchmarks --scaling                       # tiny+small+base, threads 1, 2, all cores
    python -m benchmarks --scaling --configs small --scaling-threads 1,2,4,8,16 --out scaling_results

For every configuration and thread count t the backends below are timed in interleaved rounds (one
sample of each per round, order reversed every other round, `benchmarks.timing.time_interleaved`), so
load that drifts hits them alike; ratios are medians of per-round ratios:

    np-plain   one model, OpenBLAS at t threads, FusedAdam(threads=t)
    np-dp      npformer.training.parallel.DataParallel with t replicas (t threads), OpenBLAS at 1 thread each,
               FusedAdam(threads=t); only t >= 2 (t = 1 is np-plain)
    tf-cpu     torchformer, torch.set_num_threads(t), torch.optim.Adam

Thread counts are process-wide settings (OpenBLAS's count, torch's intra-op count); every timed
callable sets the ones it needs before it runs (a ctypes call and a torch call: microseconds), so the
backends can share rounds. Workloads: train_step (forward, loss, backward, Adam) and forward (eval;
np-dp splits the rows over its replicas and concatenates the logits: `DataParallel.forward`).

Columns: median ms per call; `x tf` = time / torchformer's time at the same t (below 1: npformer
faster); `speedup` = that backend's 1-thread time / its time at t; `cores` = process CPU seconds per
wall second while it runs (np-dp well below t: its threads wait for the GIL between small NumPy
calls, the limit Python puts on thread-level data parallelism). Results also go to
OUT/scaling.json. Timings on a machine shared with other work are noisy: report the idle-machine run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import Any

import numpy as np

from benchmarks.files import write_json

DEFAULT_CONFIGS = ("tiny", "small", "base")
WORKLOADS = ("train_step", "forward")


def thread_counts(spec: list[int] | None, cores: int) -> list[int]:
    """1, 2 and every core (deduplicated, sorted), or the given list."""
    return sorted(set(spec)) if spec else sorted({1, min(2, cores), cores})


_BLAS: list = []          # cached (lib, tag) of every loaded OpenBLAS: one ctypes call per switch
_NOW: dict = {}


def _set_threads(blas: int, torch_threads: int | None) -> None:
    """OpenBLAS and torch thread counts for the next call (skipped when already set)."""
    import ctypes

    from benchmarks.machine import openblas_call, openblas_handles
    if not _BLAS:
        _BLAS.extend((lib, tag) for _, lib, tag in openblas_handles())
    if _NOW.get("blas") != blas:
        for lib, tag in _BLAS:
            openblas_call(lib, tag, "set_num_threads", ctypes.c_int(blas))
        _NOW["blas"] = blas
    if torch_threads is not None and _NOW.get("torch") != torch_threads:
        import torch
        torch.set_num_threads(torch_threads)
        _NOW["torch"] = torch_threads


def _np_callables(bc, state: dict, inputs, t: int) -> dict[str, Any]:
    """{backend: {workload: fn}} for np-plain (and np-dp when t >= 2)."""
    from benchmarks.backends import np_model
    from npformer.data.tasks import Seq2SeqBatch
    from npformer.fast.fused_adam import FusedAdam as Adam
    from npformer.layers.loss import CrossEntropyLoss
    from npformer.training.parallel import DataParallel

    tcfg = bc.transformer_config("float32")
    out: dict[str, Any] = {}
    plain = np_model(bc.model, tcfg)
    plain.load_state_dict(state)
    loss = CrossEntropyLoss()
    opt = Adam(plain.named_parameters(), lr=1e-4, threads=t)

    def plain_train():
        _set_threads(t, None)
        plain.train()
        logits = plain.forward(inputs.src, inputs.tgt_in)                 # (B, T, V)
        value = loss.forward(logits, inputs.tgt_out)
        plain.zero_grad()
        plain.backward(loss.backward())
        opt.step()
        return value

    def plain_forward():
        _set_threads(t, None)
        plain.eval()
        return plain.forward(inputs.src, inputs.tgt_in)

    out["np-plain"] = {"train_step": plain_train, "forward": plain_forward}
    if t >= 2:
        dpm = np_model(bc.model, tcfg)
        dpm.load_state_dict(state)
        dp = DataParallel(dpm, t, forward=lambda m, b: (m.forward(b.src, b.tgt_in), b.tgt_out),
                          blas_threads=None)
        dp_opt = Adam(dpm.named_parameters(), lr=1e-4, threads=t)
        lengths = np.full(inputs.src.shape[0], inputs.src.shape[1], dtype=np.int64)
        batch = Seq2SeqBatch(inputs.src, inputs.tgt_in, inputs.tgt_out, lengths, lengths)
        dp_loss = CrossEntropyLoss()

        def dp_train():
            _set_threads(1, None)
            dpm.train()
            value = dp.step(batch, dp_loss)
            dp_opt.step()
            return value

        def dp_forward():
            _set_threads(1, None)
            dpm.eval()
            return dp.forward(inputs.src, inputs.tgt_in)

        out["np-dp"] = {"train_step": dp_train, "forward": dp_forward, "_close": dp.close}
    return out


def _tf_callables(bc, state: dict, inputs, t: int) -> dict[str, Any]:
    import torch

    from benchmarks.torch_backend import tf_model

    tcfg = bc.transformer_config("float32")
    model = tf_model(bc.model, tcfg, torch.device("cpu"))
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()})
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    src, tgt_in, tgt_out = (torch.from_numpy(a) for a in (inputs.src, inputs.tgt_in, inputs.tgt_out))

    def train_step():
        _set_threads(1, t)
        model.train()
        logits = model(src, tgt_in)                                        # (B, T, V)
        value = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())
        opt.zero_grad(set_to_none=False)
        value.backward()
        opt.step()
        return value

    def forward():
        _set_threads(1, t)
        model.eval()
        with torch.no_grad():
            return model(src, tgt_in)

    return {"tf-cpu": {"train_step": train_step, "forward": forward}}


def _cores_busy(fn, median_s: float) -> float:
    """CPU seconds of the whole process per wall second over a few calls: how many cores the
    callable kept busy. Below the thread count: threads waiting (for the GIL, or on each other);
    spinning BLAS threads count as busy."""
    import time
    calls = max(1, min(5, int(0.5 / max(median_s, 1e-6))))
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.process_time() - c0) / max(time.perf_counter() - w0, 1e-9)


def run_scaling(configs: list[str], threads: list[int], *, repeats: int = 10, warmup: int = 2,
                max_time: float = 10.0, with_torch: bool = True, log=print,
                isolate: bool = True) -> list[dict[str, Any]]:
    """Rows {config, workload, threads, backend, median_s, q1_s, q3_s, samples, x_tf, speedup}."""
    from benchmarks.backends import make_inputs, np_model
    from benchmarks.configs import get_config
    from benchmarks.isolation import settle
    from benchmarks.timing import time_interleaved

    before_sample = (lambda name: settle()) if isolate else None    # helper threads idle first

    rows: list[dict[str, Any]] = []
    for cname in configs:
        bc = get_config(cname)
        if bc.model != "seq2seq":
            raise ValueError(f"--configs: scaling runs the encoder-decoder configs, got {cname!r}")
        tcfg = bc.transformer_config("float32")
        state = np_model(bc.model, tcfg).state_dict()
        inputs = make_inputs(bc, tcfg)
        for t in threads:
            cands = _np_callables(bc, state, inputs, t)
            if with_torch:
                cands.update(_tf_callables(bc, state, inputs, t))
            for w in WORKLOADS:
                fns = {b: (d[w], lambda: None) for b, d in cands.items() if w in d}
                log(f"scaling: {cname} {w} threads={t}: {', '.join(fns)}")
                timings, samples, errors = time_interleaved(fns, warmup=warmup, repeats=repeats,
                                                            max_time=max_time,
                                                            before_sample=before_sample)
                for b, tm in timings.items():
                    row = {"config": cname, "workload": w, "threads": t, "backend": b,
                           "median_s": tm.median, "q1_s": tm.q1, "q3_s": tm.q3,
                           "samples": tm.samples, "cores_busy": _cores_busy(fns[b][0], tm.median)}
                    if "tf-cpu" in samples and b != "tf-cpu":
                        row["x_tf"] = statistics.median(a / c for a, c in
                                                        zip(samples[b], samples["tf-cpu"]))
                    rows.append(row)
                for b, e in errors.items():
                    rows.append({"config": cname, "workload": w, "threads": t, "backend": b,
                                 "error": e})
            for d in cands.values():
                if "_close" in d:
                    d["_close"]()
    one = {(r["config"], r["workload"], r["backend"]): r["median_s"] for r in rows
           if r["threads"] == 1 and "median_s" in r}
    for r in rows:                                   # np-dp's 1-thread reference is np-plain's
        ref = one.get((r["config"], r["workload"], "np-plain" if r["backend"] == "np-dp"
                       else r["backend"]))
        if ref and "median_s" in r:
            r["speedup"] = ref / r["median_s"]
    return rows


def format_rows(rows: list[dict[str, Any]]) -> str:
    head = f"{'config':<7} {'workload':<11} {'threads':>7} {'backend':<9} {'ms':>9} {'x tf':>6} " \
           f"{'speedup':>7} {'cores':>5}"
    lines = [head, "-" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['config']:<7} {r['workload']:<11} {r['threads']:>7} {r['backend']:<9} "
                         f"error: {r['error']}")
            continue
        xtf = f"{r['x_tf']:.2f}" if "x_tf" in r else "-"
        sp = f"{r['speedup']:.2f}" if "speedup" in r else "-"
        lines.append(f"{r['config']:<7} {r['workload']:<11} {r['threads']:>7} {r['backend']:<9} "
                     f"{1e3 * r['median_s']:>9.2f} {xtf:>6} {sp:>7} {r['cores_busy']:>5.2f}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """Called by `python -m benchmarks --scaling` (benchmarks/cli.py) with its parsed arguments."""
    from benchmarks.configs import get_config
    from benchmarks.machine import apply_threads, available_cores, describe_machine

    configs = args.configs or list(DEFAULT_CONFIGS)
    try:
        for c in configs:
            if get_config(c).model != "seq2seq":
                raise ValueError(f"--configs: scaling runs the encoder-decoder configs "
                                 f"{list(DEFAULT_CONFIGS)}, got {c!r}")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    cores = available_cores()
    threads = thread_counts(args.scaling_threads, cores)
    out_path = os.path.join(args.out, "scaling.json")
    try:                                                 # checked before the long work starts
        from npformer.io.files import check_output_dir
        check_output_dir(args.out, "--out", writes=["scaling.json"], overwrite=args.overwrite)
    except ValueError as e:
        print(f"python -m benchmarks: error: {e}", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
        with_torch = True
    except ImportError:
        with_torch = False
    log = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    from benchmarks.load import LoadMeter, sample, summarize

    apply_threads(max(threads))
    _NOW.clear()
    load_before, meter = sample(), LoadMeter()
    rows = run_scaling(configs, threads,
                       repeats=args.repeats if args.repeats is not None else (3 if args.quick else 10),
                       warmup=args.warmup if args.warmup is not None else (1 if args.quick else 2),
                       max_time=args.max_time if args.max_time is not None else
                       (2.0 if args.quick else 10.0), with_torch=with_torch, log=log,
                       isolate=not args.no_isolate)
    during = meter.others()
    load = summarize(load_before, during, sample())
    print(f"threads {','.join(map(str, threads))} (--scaling-threads) | {load['stamp']}")
    print(format_rows(rows))
    doc = {"kind": "thread scaling", "threads": threads, "available_cores": cores,
           "machine": describe_machine(), "load": load, "isolate": not args.no_isolate,
           "rows": rows, "doc": __doc__}
    write_json(out_path, doc)
    log(f"wrote {out_path}")
    return 0
