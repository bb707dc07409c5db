"""The benchmark run: every (configuration, backend, workload), then ratios, goals and the JSON document."""
from __future__ import annotations

import gc
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks import flops as F
from benchmarks.backends import (NotApplicable, get_backend, make_inputs, make_session,
                                 master_weights, prompt_length)
from benchmarks.configs import WORKLOAD_HELP, get_config
from benchmarks.memory import measure_peak
from benchmarks.peak import peak_key
from benchmarks.timing import time_numpy, time_torch

SCHEMA = "npformer-benchmarks/1"
REFERENCE = "np-f32"          # every ratio is against this backend
CHECK_BATCH, CHECK_LEN = 2, 16  # the same-model check runs on this slice of the batch
TWIN_VS_STOCK = (("tf-cpu", "nn-cpu"), ("tf-cuda-tf32", "nn-cuda-tf32"),  # goal: twin <= stock
                 ("tf-cuda-bf16", "nn-cuda-bf16"))


@dataclass
class Options:
    configs: list[str]
    backends: list[str]
    workloads: list[str]
    threads: int
    warmup: int = 2
    repeats: int = 10
    max_time: float = 15.0
    memory: bool = True
    check: bool = True
    quick: bool = False
    sweeps: bool = True
    sweep_backends: list[str] = field(default_factory=lambda: ["np-f32", "tf-cpu"])
    verbose: bool = True

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _log(opts: Options, msg: str) -> None:
    if opts.verbose:
        print(msg, file=sys.stderr, flush=True)


def workload_flops(bc, tcfg, workload: str, kv_cache: bool) -> int:
    if workload == "generate":
        return F.generate_flops(tcfg, bc.model, bc.gen_batch, bc.src_len if bc.model == "seq2seq"
                                else 0, prompt_length(bc), bc.gen_tokens, kv_cache=kv_cache)
    return F.step_flops(tcfg, bc.model, workload, bc.batch, bc.src_len, bc.tgt_len)


def workload_tokens(bc, workload: str) -> int:
    """Tokens per call: target tokens for the training workloads, new tokens for generation."""
    return bc.gen_batch * bc.gen_tokens if workload == "generate" else bc.batch * bc.tgt_len


def _reference_logits(bc, master, inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """npformer float64 logits on the check slice: the yardstick of the same-model check."""
    from benchmarks.backends import BACKENDS, NumpySession

    src = inputs.src[:CHECK_BATCH, :CHECK_LEN]
    tgt = inputs.tgt_in[:CHECK_BATCH, :CHECK_LEN]
    s = NumpySession(bc, BACKENDS["np-f64"], master, inputs)
    ref = s.logits(src, tgt)
    s.close()
    return src, tgt, ref


def measure_one(session, bc, tcfg, workload: str, opts: Options, peaks: dict) -> dict[str, Any]:
    b = session.backend
    row: dict[str, Any] = {"config": bc.name, "backend": b.name, "workload": workload,
                           "status": "ok"}
    try:
        fn = session.fn(workload)
    except NotApplicable as e:
        row.update(status="skipped", reason=str(e))
        return row
    try:
        before = session.compile_stats()
        kw = dict(warmup=opts.warmup, repeats=opts.repeats, max_time=opts.max_time)
        if b.family == "numpy":
            t = time_numpy(fn, **kw)
        else:
            t = time_torch(fn, threads=opts.threads, cuda=b.cuda, **kw)
        row["timing"] = t.as_dict()
        if before is not None:                # what torch.compile did for this workload
            after = session.compile_stats()
            row["compile"] = {k: after[k] - before[k] for k in after}
        fl = workload_flops(bc, tcfg, workload, session.kv_cache)
        row["flops"] = fl
        row["gflops"] = fl / t.median / 1e9
        key = peak_key(b.device, b.precision)
        pk = peaks.get(key)
        row["peak_key"] = key
        row["peak_fraction"] = row["gflops"] / pk["gflops"] if pk else None
        tokens = workload_tokens(bc, workload)
        row["tokens"] = tokens
        row["tokens_per_s"] = tokens / t.median
        if workload == "generate":
            row["kv_cache"] = session.kv_cache
        if opts.memory:
            row["memory"] = measure_peak(fn, b.memory_kind)
    except Exception as e:  # noqa: BLE001 - one failing backend must not end the run
        row.update(status="error", error=f"{type(e).__name__}: {e}",
                   traceback=traceback.format_exc(limit=6))
    return row


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """time / time(np-f32) of the same configuration and workload (< 1: faster than npformer f32)."""
    ref = {(r["config"], r["workload"]): r["timing"]["median"] for r in rows
           if r["backend"] == REFERENCE and r["status"] == "ok"}
    for r in rows:
        base = ref.get((r["config"], r["workload"]))
        if r["status"] == "ok" and base:
            r["time_vs_np_f32"] = r["timing"]["median"] / base


def _median(rows, config, backend, workload):
    for r in rows:
        if (r["config"], r["backend"], r["workload"]) == (config, backend, workload) \
                and r["status"] == "ok":
            return r
    return None


def evaluate_goals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's performance goals, measured (never asserted): value, target, met or not."""
    goals = []
    np32 = _median(rows, "base", "np-f32", "train_step")
    tf = _median(rows, "base", "tf-cpu", "train_step")
    if np32 and tf:
        v = np32["timing"]["median"] / tf["timing"]["median"]
        goals.append({"goal": "base train_step: time(np-f32) / time(tf-cpu) <= 1.3", "value": v,
                      "target": 1.3, "met": v <= 1.3})
    if np32 and np32.get("peak_fraction") is not None:
        v = np32["peak_fraction"]
        goals.append({"goal": "base train_step: np-f32 GFLOP/s >= 50% of measured float32 matmul "
                              "peak", "value": v, "target": 0.5, "met": v >= 0.5})
    for twin, stock in TWIN_VS_STOCK:
        for r in rows:
            if r["backend"] != twin or r["status"] != "ok":
                continue
            s = _median(rows, r["config"], stock, r["workload"])
            if s:
                v = r["timing"]["median"] / s["timing"]["median"]
                note = " (stock has no KV cache)" if r["workload"] == "generate" else ""
                goals.append({"goal": f"{r['config']} {r['workload']}: time({twin}) / "
                                      f"time({stock}) <= 1{note}", "value": v, "target": 1.0,
                              "met": v <= 1.0})
    for name in ("tf-cuda-bf16", "tf-cuda-compile-bf16"):
        g = _median(rows, "gpt2s", name, "train_step")
        if g and g.get("peak_fraction") is not None:
            goals.append({"goal": f"gpt2s train_step {name}: MFU (vs measured bf16 matmul peak)",
                          "value": g["peak_fraction"], "target": None, "met": None})
    return goals


def run_benchmark(opts: Options, peaks_doc: dict, cuda: bool) -> list[dict[str, Any]]:
    peaks = peaks_doc["peak"]
    rows: list[dict[str, Any]] = []
    for cname in opts.configs:
        bc = get_config(cname)
        tcfg = bc.transformer_config("float32")
        backends = [get_backend(n) for n in opts.backends]
        if bc.cuda_only:
            if not cuda:
                _log(opts, f"[{cname}] skipped: CUDA-only configuration and no GPU")
                continue
            backends = [b for b in backends if b.cuda]
        if not backends:
            continue
        _log(opts, f"[{cname}] {bc.describe()}")
        t0 = time.perf_counter()
        inputs = make_inputs(bc, tcfg)
        master = master_weights(bc)
        ref = _reference_logits(bc, master, inputs) if opts.check else None
        _log(opts, f"[{cname}] weights and reference built in {time.perf_counter() - t0:.1f}s")
        for b in backends:
            try:
                session = make_session(bc, b, master, inputs, opts.threads)
            except Exception as e:  # noqa: BLE001
                for w in opts.workloads:
                    rows.append({"config": cname, "backend": b.name, "workload": w,
                                 "status": "error", "error": f"build: {type(e).__name__}: {e}"})
                _log(opts, f"[{cname}] {b.name}: build failed: {e}")
                continue
            check = None
            if ref is not None:
                try:
                    got = session.logits(ref[0], ref[1])
                    scale = float(np.max(np.abs(ref[2])))
                    check = {"max_abs_diff_vs_np_f64": float(np.max(np.abs(got - ref[2]))),
                             "ref_max_abs": scale,
                             "slice": f"batch[:{CHECK_BATCH}], len[:{CHECK_LEN}], eval mode"}
                    check["rel"] = check["max_abs_diff_vs_np_f64"] / max(scale, 1e-30)
                except Exception as e:  # noqa: BLE001
                    check = {"error": f"{type(e).__name__}: {e}"}
            for w in opts.workloads:
                row = measure_one(session, bc, tcfg, w, opts, peaks)
                row["check"] = check
                rows.append(row)
                _log(opts, f"[{cname}] {b.name:>22} {w:>10}: " + (
                    f"{row['timing']['median'] * 1e3:10.2f} ms  {row['gflops']:7.1f} GFLOP/s"
                    if row["status"] == "ok" else f"{row['status']}: "
                    f"{row.get('reason') or row.get('error')}"))
            session.close()
            del session
            if b.compile or b.cuda:
                gc.collect()                  # compiled graphs / device memory: free them now
    add_ratios(rows)
    return rows


def workload_docs() -> dict[str, str]:
    return dict(WORKLOAD_HELP)
