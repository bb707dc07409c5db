"""The benchmark run: every (configuration, backend, workload), then ratios, goals and the JSON document."""
from __future__ import annotations

import gc
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from benchmarks import flops as F
from benchmarks.backends import NotApplicable, get_backend, make_inputs, make_session, master_weights, prompt_length
from benchmarks.configs import WORKLOAD_HELP, resolve_config
from benchmarks.isolation import SettleStats, settle
from benchmarks.memory import measure_peak
from benchmarks.peak import peak_key
from benchmarks.timing import time_interleaved, time_numpy, time_torch

SCHEMA = "npformer-benchmarks/1"
REFERENCE = "np-f32"          # every ratio is against this backend
CHECK_BATCH, CHECK_LEN = 2, 16  # the same-model check runs on this slice of the batch


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
    interleave: bool = False
    isolate: bool = True            # settle (benchmarks/isolation.py) before every sample
    sweep_backends: list[str] = field(default_factory=lambda: ["np-f32", "tf-cpu"])
    overrides: dict[str, Any] = field(default_factory=dict)   # batch_size, seq_len, dropout
    verbose: bool = True
    log: Callable[[str], None] | None = None                  # progress lines (default: stderr)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "log"}


def _log(opts: Options, msg: str) -> None:
    if not opts.verbose:
        return
    if opts.log is not None:
        opts.log(msg)
    else:
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


def _finish_row(row: dict[str, Any], session, bc, tcfg, workload: str, fn, t, opts: Options,
                peaks: dict) -> None:
    """Derived figures of a timed row: FLOPs, GFLOP/s, peak fraction, tokens/s, memory."""
    b = session.backend
    row["timing"] = t.as_dict()
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
    note = getattr(session, "workload_note", lambda w: None)(workload)
    if note:
        row["note"] = note
    if opts.memory:
        row["memory"] = measure_peak(fn, b.memory_kind)
        extra = getattr(session, "resident_extra_bytes", lambda w: 0)(workload)
        if extra:
            row["memory"]["resident_extra_bytes"] = int(extra)


def _new_row(bc, b, workload: str) -> dict[str, Any]:
    return {"config": bc.name, "backend": b.name, "workload": workload, "status": "ok"}


def _error(row: dict[str, Any], e: BaseException) -> None:
    row.update(status="error", error=f"{type(e).__name__}: {e}",
               traceback=traceback.format_exc(limit=6))


def measure_one(session, bc, tcfg, workload: str, opts: Options, peaks: dict) -> dict[str, Any]:
    """One backend, one workload: warm-up then samples (timing.time_numpy / time_torch)."""
    b = session.backend
    row = _new_row(bc, b, workload)
    try:
        fn = session.fn(workload)
    except NotApplicable as e:
        row.update(status="skipped", reason=str(e))
        return row
    try:
        before = session.compile_stats()
        kw = dict(warmup=opts.warmup, repeats=opts.repeats, max_time=opts.max_time)
        if opts.isolate:                      # the previous backend's helper threads: quiet first
            waited, quiet = settle()
            row["settle"] = {"before_first_sample_s": waited, "quiet": quiet}
        if b.family == "numpy":
            t = time_numpy(fn, **kw)
        else:
            t = time_torch(fn, threads=opts.threads, cuda=b.cuda, **kw)
        if before is not None:                # what torch.compile did for this workload
            after = session.compile_stats()
            row["compile"] = {k: after[k] - before[k] for k in after}
        _finish_row(row, session, bc, tcfg, workload, fn, t, opts, peaks)
    except Exception as e:  # noqa: BLE001 - one failing backend must not end the run
        _error(row, e)
    return row


def measure_interleaved(sessions: list, bc, tcfg, workload: str, opts: Options,
                        peaks: dict) -> list[dict[str, Any]]:
    """Every backend of a configuration on one workload, one sample each per round."""
    rows, fns, by_name = [], {}, {}
    for s in sessions:
        row = _new_row(bc, s.backend, workload)
        rows.append(row)
        try:
            fn = s.fn(workload)
        except NotApplicable as e:
            row.update(status="skipped", reason=str(e))
            continue
        sync = _cuda_sync() if s.backend.cuda else (lambda: None)
        fns[s.backend.name] = (fn, sync)
        by_name[s.backend.name] = (s, fn, row, s.compile_stats())
    waits_before = {n: SettleStats() for n in fns}   # waits before this backend's samples
    waits_after = {n: SettleStats() for n in fns}    # waits for its own threads to go quiet
    last: list[str] = []

    def before_sample(name: str) -> None:
        waited, quiet = settle()
        waits_before[name].add(waited, quiet)
        if last:
            waits_after[last[0]].add(waited, quiet)
        last[:] = [name]

    timings, samples, errors = time_interleaved(fns, warmup=opts.warmup, repeats=opts.repeats,
                                                max_time=opts.max_time,
                                                before_sample=before_sample if opts.isolate else None)
    for name, (s, fn, row, before) in by_name.items():
        if name in errors:
            row.update(status="error", error=errors[name])
            continue
        try:
            if before is not None:
                after = s.compile_stats()
                row["compile"] = {k: after[k] - before[k] for k in after}
            _finish_row(row, s, bc, tcfg, workload, fn, timings[name], opts, peaks)
            row["round_samples"] = samples[name]
            if opts.isolate:
                row["settle"] = {"before_its_samples": waits_before[name].as_dict(),
                                 "after_its_samples": waits_after[name].as_dict()}
        except Exception as e:  # noqa: BLE001
            _error(row, e)
    return rows


def _cuda_sync():
    import torch
    return torch.cuda.synchronize


def add_paired_ratios(rows: list[dict[str, Any]]) -> None:
    """Interleaved runs: median over rounds of time / time(np-f32) in the same round."""
    ref = {(r["config"], r["workload"]): r["round_samples"] for r in rows
           if r["backend"] == REFERENCE and r["status"] == "ok" and "round_samples" in r}
    for r in rows:
        base = ref.get((r["config"], r["workload"]))
        if r["status"] == "ok" and base and "round_samples" in r:
            ratios = [a / b for a, b in zip(r["round_samples"], base)]
            r["paired_time_vs_np_f32"] = float(np.median(ratios))


def add_peak_fractions(rows: list[dict[str, Any]], peaks: dict) -> None:
    """GFLOP/s as a fraction of the peak of the row's device and precision (recomputed when the peak
    is updated at the end of the run)."""
    for r in rows:
        if r["status"] == "ok" and "peak_key" in r:
            pk = peaks.get(r["peak_key"])
            r["peak_fraction"] = r["gflops"] / pk["gflops"] if pk else None


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """time / time(np-f32) of the same configuration and workload (< 1: faster than npformer f32)."""
    ref = {(r["config"], r["workload"]): r["timing"]["median"] for r in rows
           if r["backend"] == REFERENCE and r["status"] == "ok"}
    for r in rows:
        base = ref.get((r["config"], r["workload"]))
        if r["status"] == "ok" and base:
            r["time_vs_np_f32"] = r["timing"]["median"] / base


def run_benchmark(opts: Options, peaks_doc: dict, cuda: bool) -> list[dict[str, Any]]:
    peaks = peaks_doc["peak"]
    rows: list[dict[str, Any]] = []
    for cname in opts.configs:
        bc = resolve_config(cname, **opts.overrides)
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
        sessions = []
        for b in backends:
            try:
                session = make_session(bc, b, master, inputs, opts.threads)
            except Exception as e:  # noqa: BLE001
                for w in opts.workloads:
                    rows.append({"config": cname, "backend": b.name, "workload": w,
                                 "status": "error", "error": f"build: {type(e).__name__}: {e}"})
                _log(opts, f"[{cname}] {b.name}: build failed: {e}")
                continue
            check = _check(session, ref)
            if opts.interleave:
                sessions.append((session, check))
                continue
            for w in opts.workloads:
                row = measure_one(session, bc, tcfg, w, opts, peaks)
                row["check"] = check
                rows.append(row)
                _log_row(opts, cname, row)
            _close(session)
        if opts.interleave:
            for w in opts.workloads:
                for row, (_, check) in zip(measure_interleaved([s for s, _ in sessions], bc, tcfg,
                                                               w, opts, peaks), sessions):
                    row["check"] = check
                    rows.append(row)
                    _log_row(opts, cname, row)
            for s, _ in sessions:
                _close(s)
    add_ratios(rows)
    add_paired_ratios(rows)
    return rows


def _check(session, ref) -> dict[str, Any] | None:
    """Eval logits of this backend vs npformer float64 on the check slice."""
    if ref is None:
        return None
    try:
        got = session.logits(ref[0], ref[1])
        scale = float(np.max(np.abs(ref[2])))
        diff = float(np.max(np.abs(got - ref[2])))
        return {"max_abs_diff_vs_np_f64": diff, "ref_max_abs": scale, "rel": diff / max(scale, 1e-30),
                "slice": f"batch[:{CHECK_BATCH}], len[:{CHECK_LEN}], eval mode"}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}


def _log_row(opts: Options, cname: str, row: dict[str, Any]) -> None:
    _log(opts, f"[{cname}] {row['backend']:>22} {row['workload']:>10}: " + (
        f"{row['timing']['median'] * 1e3:10.2f} ms  {row['gflops']:7.1f} GFLOP/s"
        if row["status"] == "ok" else f"{row['status']}: {row.get('reason') or row.get('error')}"))


def _close(session) -> None:
    session.close()
    if session.backend.compile or session.backend.cuda:
        gc.collect()                          # compiled graphs / device memory: free them now


def workload_docs() -> dict[str, str]:
    return dict(WORKLOAD_HELP)
