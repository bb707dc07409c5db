"""The performance goals, as the benchmark measures them (printed met / NOT met, never asserted).

  npformer vs its twin   time(np-f32) / time(tf-cpu) <= 1.10 for forward and train_step of base and
                         GPT-2 small (gpt2s-cpu), <= 1.3 for the small configuration
  npformer's efficiency  np-f32 GFLOP/s >= 60 % of the measured float32 matmul peak on the base and
                         GPT-2 small training steps at 1 thread, >= 50 % at 2 threads (and more)
  twin vs stock          time(torchformer) / time(torch.nn) <= 1 wherever both ran

They are stated for each configuration's own shape, in one interleaved run at a fixed thread count:
a goal measured at an overridden shape, without --interleave, or on a loaded machine says so.
"""
from __future__ import annotations

from typing import Any

import numpy as np

REFERENCE, TWIN = "np-f32", "tf-cpu"
RATIO_TARGETS = {"base": 1.10, "gpt2s-cpu": 1.10, "small": 1.3}
RATIO_WORKLOADS = ("forward", "train_step")
PEAK_CONFIGS = ("base", "gpt2s-cpu")
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

    def add(text, value, target, met):
        goals.append({"goal": text, "value": value, "target": target, "met": met})

    for cfg, target in RATIO_TARGETS.items():
        if cfg not in configs:
            continue
        for w in RATIO_WORKLOADS:
            a, b = _row(rows, cfg, REFERENCE, w), _row(rows, cfg, TWIN, w)
            text = f"{cfg} {w} at {threads} thread(s): time({REFERENCE}) / time({TWIN}) <= {target:.2f}"
            v = time_ratio(a, b) if a and b else None
            add(text, v, target, None if v is None else v <= target)
    pt = peak_target(threads)
    for cfg in PEAK_CONFIGS:
        if cfg not in configs:
            continue
        r = _row(rows, cfg, REFERENCE, "train_step")
        v = r.get("peak_fraction") if r else None
        add(f"{cfg} train_step at {threads} thread(s): {REFERENCE} >= {100 * pt:.0f}% of the measured "
            f"float32 matmul peak", v, pt, None if v is None else v >= pt)
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
            lines.append(f"  {g['goal']}: not measured in this run")
            continue
        met = "" if g["met"] is None else ("  met" if g["met"] else "  NOT met")
        met += " (on a LOADED machine)" if loaded and met else ""
        lines.append(f"  {g['goal']}: {g['value']:.3f}{met}")
    lines += [f"  caveat: {n}" for n in notes or []]
    return "\n".join(lines)
