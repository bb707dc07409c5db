"""The performance goals, as the benchmark measures them (printed met / NOT met, never asserted).

  npformer vs its twin   time(np-f32) / time(tf-cpu) <= 1.10 for forward and train_step of base and
                         GPT-2 small (gpt2s-cpu), <= 1.3 for the small configuration
  npformer's efficiency  np-f32 GFLOP/s >= 60 % of the measured float32 matmul peak on the base and
                         GPT-2 small training steps at 1 thread, >= 50 % at 2 threads (and more)
  decoding               time(np-f32 generate) / time(hf-cpu generate) <= 1 on gpt2s-cpu: greedy
                         decoding with the KV cache at least level with transformers.generate
  memory                 peak bytes of np-f32's train_step (the npformer.fast variants) at most 1.2x
                         those of np-f32-plain (the plain code) in the same run; with data
                         parallelism the other replicas' gradients, held between steps, count too
  twin vs stock          time(torchformer) / time(torch.nn) <= 1 wherever both ran

They are stated for each configuration's own shape, in one interleaved run at a fixed thread count:
a goal measured at an overridden shape, without --interleave, or on a loaded machine says so. A run
has one thread count, so the goals of the other (1 or 2) are listed as not measured, with the flag
that measures them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

REFERENCE, TWIN = "np-f32", "tf-cpu"
RATIO_TARGETS = {"base": 1.10, "gpt2s-cpu": 1.10, "small": 1.3}
RATIO_WORKLOADS = ("forward", "train_step")
PEAK_CONFIGS = ("base", "gpt2s-cpu")
GOAL_THREADS = (1, 2)
DECODING = ("gpt2s-cpu", "hf-cpu", 1.0)            # config, yardstick backend, target ratio
PLAIN, MEMORY_TARGET = "np-f32-plain", 1.2
TWIN_VS_STOCK = (("tf-cpu", "nn-cpu"), ("tf-cuda-tf32", "nn-cuda-tf32"),
                 ("tf-cuda-bf16", "nn-cuda-bf16"))


def peak_target(threads: int) -> float:
    return 0.60 if threads <= 1 else 0.50


def _row(rows, config, backend, workload):
    for r in rows:
        if (r["config"], r["backend"], r["workload"]) == (config, backend, workload) \
                and r["status"] == "ok":
            return r
    return None


def time_ratio(a: dict[str, Any], b: dict[str, Any]) -> float:
    """time(a) / time(b): the median of per-round ratios when both were interleaved, else of medians."""
    ra, rb = a.get("round_samples"), b.get("round_samples")
    if ra and rb and len(ra) == len(rb):
        return float(np.median([x / y for x, y in zip(ra, rb)]))
    return a["timing"]["median"] / b["timing"]["median"]


def evaluate_goals(rows: list[dict[str, Any]], threads: int, configs: list[str]) -> list[dict]:
    """Every goal of the configurations run, with value, target and met; a goal whose backends or
    workload were not part of the run is listed with value None ("not measured")."""
    goals: list[dict[str, Any]] = []

    def add(text, value, target, met, needs=None):
        goals.append({"goal": text, "value": value, "target": target, "met": met, "needs": needs})

    others = [t for t in GOAL_THREADS if t != threads]
    for cfg, target in RATIO_TARGETS.items():
        if cfg not in configs:
            continue
        for w in RATIO_WORKLOADS:
            a, b = _row(rows, cfg, REFERENCE, w), _row(rows, cfg, TWIN, w)
            text = f"{cfg} {w} at {{}} thread(s): time({REFERENCE}) / time({TWIN}) <= {target:.2f}"
            v = time_ratio(a, b) if a and b else None
            add(text.format(threads), v, target, None if v is None else v <= target,
                None if v is not None else f"--backends {REFERENCE},{TWIN} --workloads {w}")
            for t in others:
                add(text.format(t), None, target, None, f"--threads {t}")
    for cfg in PEAK_CONFIGS:
        if cfg not in configs:
            continue
        r = _row(rows, cfg, REFERENCE, "train_step")
        text = (f"{cfg} train_step at {{}} thread(s): {REFERENCE} >= {{:.0f}}% of the measured "
                f"float32 matmul peak")
        v = r.get("peak_fraction") if r else None
        pt = peak_target(threads)
        add(text.format(threads, 100 * pt), v, pt, None if v is None else v >= pt,
            None if v is not None else f"--backends {REFERENCE} --workloads train_step")
        for t in others:
            add(text.format(t, 100 * peak_target(t)), None, peak_target(t), None, f"--threads {t}")
    cfg, yardstick, target = DECODING
    if cfg in configs:
        a, b = _row(rows, cfg, REFERENCE, "generate"), _row(rows, cfg, yardstick, "generate")
        v = time_ratio(a, b) if a and b else None
        add(f"{cfg} generate at {threads} thread(s): time({REFERENCE}) / time({yardstick}, "
            f"transformers.generate) <= {target:g}", v, target, None if v is None else v <= target,
            None if v is not None else f"--backends {REFERENCE},{yardstick} --workloads generate")
    for cfg in configs:                   # every goal config, and any other that ran both
        a, b = _row(rows, cfg, REFERENCE, "train_step"), _row(rows, cfg, PLAIN, "train_step")
        if cfg not in RATIO_TARGETS and not (a and b):
            continue
        ma, mb = (_step_bytes(r) for r in (a, b))
        v = ma / mb if ma is not None and mb else None
        held = (((a or {}).get("memory") or {}).get("resident_extra_bytes") or 0) / 2**20
        add(f"{cfg} train_step peak memory: {REFERENCE} / {PLAIN} <= {MEMORY_TARGET:g}"
            + (f" ({REFERENCE}'s with the {held:.0f} MiB its data-parallel replicas' gradients "
               f"hold)" if held else ""), v,
            MEMORY_TARGET, None if v is None else v <= MEMORY_TARGET,
            None if v is not None else f"--backends {REFERENCE},{PLAIN} (memory on)")
    for twin, stock in TWIN_VS_STOCK:
        for r in rows:
            if r["backend"] != twin or r["status"] != "ok":
                continue
            s = _row(rows, r["config"], stock, r["workload"])
            if s:
                v = time_ratio(r, s)
                note = " (stock has no KV cache)" if r["workload"] == "generate" else ""
                add(f"{r['config']} {r['workload']}: time({twin}) / time({stock}) <= 1{note}",
                    v, 1.0, v <= 1.0)
    for name in ("tf-cuda-bf16", "tf-cuda-compile-bf16"):
        g = _row(rows, "gpt2s", name, "train_step")
        if g and g.get("peak_fraction") is not None:
            add(f"gpt2s train_step {name}: MFU (vs measured bf16 matmul peak)", g["peak_fraction"],
                None, None)
    return goals


def caveats(interleaved: bool, overridden: dict[str, Any], loaded: bool) -> list[str]:
    """Why this run's goal verdicts may not be the goals' own measurement."""
    out = []
    if not interleaved:
        out.append("not interleaved: the goals are stated for one --interleave run")
    if overridden:
        out.append("shape overridden (" + ", ".join(f"--{k.replace('_', '-')} {v}"
                                                    for k, v in overridden.items())
                   + "): the goals are stated for each configuration's own shape")
    if loaded:
        out.append("measured on a LOADED machine: rerun on an idle one before trusting a verdict")
    return out


def format_goals(goals: list[dict[str, Any]], notes: list[str] | None = None,
                 loaded: bool = False) -> str:
    """One line per goal; on a LOADED run every verdict says so on its own line too."""
    if not goals:
        return ("performance goals: none measured in this run (they need small, base or gpt2s-cpu "
                f"with {REFERENCE} and {TWIN})")
    lines = ["performance goals (measured, not asserted):"]
    for g in goals:
        if g["value"] is None:
            needs = f" (measure with {g['needs']})" if g.get("needs") else ""
            lines.append(f"  {g['goal']}: not measured in this run{needs}")
            continue
        met = "" if g["met"] is None else ("  met" if g["met"] else "  NOT met")
        met += " (on a LOADED machine)" if loaded and met else ""
        lines.append(f"  {g['goal']}: {g['value']:.3f}{met}")
    lines += [f"  caveat: {n}" for n in notes or []]
    return "\n".join(lines)


def _step_bytes(row: dict[str, Any] | None) -> int | None:
    """A train_step row's peak bytes above its start plus what it holds between steps beyond one
    model's parameters and gradients (data-parallel replicas' gradients); None when not measured."""
    mem = ((row or {}).get("memory") or {})
    peak = mem.get("peak_bytes")
    return None if peak is None else peak + int(mem.get("resident_extra_bytes") or 0)
