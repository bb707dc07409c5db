"""Median wall time of one oracle check per component (docs/ORACLE.md, "Timing").

    python benchmarks/oracle_check_time.py --root /path/to/checkout --reps 3 --examples 10 --out t.json

Each check runs in a fresh Python process (so nothing is cached between repetitions) with
PYTHONPATH=ROOT; the time measured is `check(...)` itself (loading, the search, every child process
it starts), not the interpreter start-up or the import of the oracle. One correct candidate per
component, from parity_tests/oracle_candidates/ of the checkout measured.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = [
    ("sdpa", "torch_attention.py", "attention"),
    ("mha", "torch_mha.py", "MultiHeadAttention"),
    ("positional", "torch_layers.py", "PositionalEncoding"),
    ("ffn", "torch_layers.py", "PositionwiseFeedForward"),
    ("layernorm", "torch_layers.py", "LayerNorm"),
    ("encoder_layer", "torch_layers.py", "EncoderLayer"),
    ("decoder_layer", "torch_layers.py", "DecoderLayer"),
    ("model", "torch_layers.py", "Transformer"),
]

SNIPPET = """
import json, sys, time
from parity_tests.oracle import check
comp, spec, n, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
kw = {} if runs == "default" else {"runs": int(runs)}
t0 = time.perf_counter()
res = check(comp, spec, examples=n, **kw)
print(json.dumps({"verdict": res.verdict, "seconds": time.perf_counter() - t0,
                  "examples": res.examples_run}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.getcwd())
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--examples", type=int, default=10)
    ap.add_argument("--runs", default="default",
                    help="calls per example (isolated oracle only; 'default' for checkouts without it)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    env = dict(os.environ, PYTHONPATH=root, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    rows = {}
    for comp, file, name in CASES:
        spec = f"{os.path.join(root, 'parity_tests', 'oracle_candidates', file)}:{name}"
        times, verdicts = [], set()
        for _ in range(a.reps):
            p = subprocess.run([sys.executable, "-c", SNIPPET, comp, spec, str(a.examples), a.runs],
                               cwd=root, env=env, capture_output=True, text=True, timeout=900)
            if p.returncode != 0:
                print(p.stderr[-2000:], file=sys.stderr)
                break
            r = json.loads(p.stdout.strip().splitlines()[-1])
            times.append(r["seconds"])
            verdicts.add(r["verdict"])
        rows[comp] = {"median_s": statistics.median(times) if times else None,
                      "times_s": times, "verdicts": sorted(verdicts)}
        print(f"{comp:14s} median {rows[comp]['median_s']} s  {sorted(verdicts)}", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"root": root, "examples": a.examples, "reps": a.reps, "runs": a.runs,
                       "checks": rows}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
