"""Does a backend's place in the interleaved round change its time? The check of benchmarks/isolation.py.

    python -m benchmarks.order_bias --configs base --workloads forward --threads 2 --out DIR

Runs `python -m benchmarks --interleave` four times, each in its own process, one after another:
the backends in two orders (np-f32,tf-cpu,nn-cpu and np-f32,nn-cpu,tf-cpu: which torch backend
directly follows NumPy changes), each with the settle wait (the default) and without it
(`--no-isolate`). Printed per run: median and IQR of the two torch backends, their paired ratio
time(tf-cpu) / time(nn-cpu), time(np-f32) / time(tf-cpu), and how long NumPy's helper threads kept
a core busy after its samples. Without the wait the torch backend that follows NumPy gets slower and
more spread and the ratios move with the order; with it they should not. Other load on the machine
moves every figure: the stamp of each run is printed beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

from benchmarks.files import write_json

ORDERS = (("np-f32", "tf-cpu", "nn-cpu"), ("np-f32", "nn-cpu", "tf-cpu"))


def _row(doc: dict[str, Any], backend: str, workload: str) -> dict[str, Any] | None:
    return next((r for r in doc["results"] if r["backend"] == backend and r["workload"] == workload
                 and r["status"] == "ok"), None)


def summarize(doc: dict[str, Any], workload: str) -> dict[str, Any]:
    """The figures of one run that show (or not) the order bias."""
    from benchmarks.goals import time_ratio

    rows = {b: _row(doc, b, workload) for b in ORDERS[0]}
    out: dict[str, Any] = {"isolate": doc["options"]["isolate"], "order": doc["options"]["backends"],
                           "load": doc["load"]["stamp"]}
    for b, r in rows.items():
        if r is None:
            continue
        out[f"{b} median ms"] = 1e3 * r["timing"]["median"]
        out[f"{b} IQR ms"] = 1e3 * r["timing"]["iqr"]
    if rows["tf-cpu"] and rows["nn-cpu"]:
        out["tf/nn"] = time_ratio(rows["tf-cpu"], rows["nn-cpu"])
    if rows["np-f32"] and rows["tf-cpu"]:
        out["np/tf"] = time_ratio(rows["np-f32"], rows["tf-cpu"])
    spin = ((rows["np-f32"] or {}).get("settle") or {}).get("after_its_samples")
    out["np-f32 spin ms"] = 1e3 * spin["mean_s"] if spin else None
    return out


def format_summary(runs: list[dict[str, Any]]) -> str:
    cols = ["isolate", "order", "tf-cpu median ms", "tf-cpu IQR ms", "nn-cpu median ms",
            "nn-cpu IQR ms", "tf/nn", "np/tf", "np-f32 spin ms"]
    lines = [" | ".join(cols)]
    for r in runs:
        cells = []
        for c in cols:
            v = r.get(c)
            cells.append(",".join(v) if isinstance(v, list) else
                         ("-" if v is None else f"{v:.3g}" if isinstance(v, float) else str(v)))
        lines.append(" | ".join(cells) + "   [" + r["load"] + "]")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.order_bias", description=__doc__)
    p.add_argument("--configs", default="base", help="one config (default: %(default)s)")
    p.add_argument("--workloads", default="forward", help="one workload (default: %(default)s)")
    p.add_argument("--threads", default="2", help="threads (default: %(default)s)")
    p.add_argument("--repeats", default="12", help="rounds per run (default: %(default)s)")
    p.add_argument("--out", default="order_bias_results", help="folder (default: %(default)s)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace what an earlier run left in --out")
    args = p.parse_args(argv)
    if "," in args.configs or "," in args.workloads:
        p.error("--configs/--workloads: expected one name each")
    from npformer.io.files import check_output_dir
    tags = [f"{'isolated' if i else 'not-isolated'}-{'-'.join(o)}" for i in (False, True)
            for o in ORDERS]
    try:
        check_output_dir(args.out, "--out", writes=["order_bias.json", *tags],
                         overwrite=args.overwrite)
    except ValueError as e:
        p.error(str(e))
    os.makedirs(args.out, exist_ok=True)
    runs = []
    for isolate in (False, True):
        for order in ORDERS:
            tag = f"{'isolated' if isolate else 'not-isolated'}-{'-'.join(order)}"
            out = os.path.join(args.out, tag)
            cmd = [sys.executable, "-m", "benchmarks", "--interleave", "--configs", args.configs,
                   "--workloads", args.workloads, "--backends", ",".join(order), "--threads",
                   args.threads, "--repeats", args.repeats, "--warmup", "2", "--max-time", "60",
                   "--no-sweeps", "--no-plots", "--no-memory", "--no-check", "--peak-sizes", "512",
                   "--quiet", "--out", out] + ([] if isolate else ["--no-isolate"]) \
                + (["--overwrite"] if args.overwrite else [])
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                print(res.stdout[-2000:], res.stderr[-2000:], file=sys.stderr)
                return res.returncode
            with open(os.path.join(out, "results.json")) as f:
                runs.append(summarize(json.load(f), args.workloads))
            print(format_summary(runs[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    text = (f"{args.configs} {args.workloads}, {args.threads} thread(s), {args.repeats} interleaved "
            f"rounds per run\n" + format_summary(runs))
    print(text)
    write_json(os.path.join(args.out, "order_bias.json"), runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
