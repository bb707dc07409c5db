"""Median wall time of one oracle check per component, several checkouts interleaved
(docs/ORACLE.md, "Timing").

    python benchmarks/oracle_check_time.py --root /path/before --root /path/after --reps 5 \\
        --examples 10 --out t.json

Each check runs in a fresh Python process (nothing cached between repetitions) with
PYTHONPATH=ROOT and one thread per BLAS/OpenMP pool; the time measured is `check(...)` itself
(loading the candidate, the search, every worker process it starts), not the interpreter start-up or
the import of the oracle. For each component and repetition the checkouts run one after the other,
so a busy machine slows them alike; the medians and their ratio to the first checkout are printed.
One correct PyTorch candidate per component, from parity_tests/oracle_candidates/ of each checkout.
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
comp, spec, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
res = check(comp, spec, examples=n)
print(json.dumps({"verdict": res.verdict, "seconds": time.perf_counter() - t0,
                  "examples": res.examples_run}))
"""


def one(root: str, comp: str, file: str, name: str, examples: int) -> dict | None:
    env = dict(os.environ, PYTHONPATH=root, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    spec = f"{os.path.join(root, 'parity_tests', 'oracle_candidates', file)}:{name}"
    p = subprocess.run([sys.executable, "-c", SNIPPET, comp, spec, str(examples)], cwd=root,
                       env=env, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        print(p.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", action="append", required=True, help="a checkout (repeatable)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--examples", type=int, default=10)
    ap.add_argument("--components", default=",".join(c for c, _, _ in CASES))
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.out and os.path.lexists(a.out):
        ap.error(f"--out {a.out}: exists; choose a new file")
    roots = [os.path.abspath(r) for r in a.root]
    wanted = a.components.split(",")
    rows: dict = {}
    for comp, file, name in CASES:
        if comp not in wanted:
            continue
        times = {r: [] for r in roots}
        verdicts = {r: set() for r in roots}
        for _ in range(a.reps):
            for r in roots:
                got = one(r, comp, file, name, a.examples)
                if got:
                    times[r].append(got["seconds"])
                    verdicts[r].add(got["verdict"])
        med = {r: statistics.median(t) if t else None for r, t in times.items()}
        rows[comp] = {r: {"median_s": med[r], "times_s": times[r], "verdicts": sorted(verdicts[r])}
                      for r in roots}
        base = med[roots[0]]
        print(f"{comp:14s} " + "  ".join(
            f"{os.path.basename(r) or r}: {med[r]:.2f} s {sorted(verdicts[r])}"
            + (f" (x{med[r] / base:.2f})" if base and med[r] and r != roots[0] else "")
            for r in roots if med[r] is not None), flush=True)
    if a.out:
        tmp = a.out + ".tmp"                   # whole or not at all (run as a script: stdlib only)
        with open(tmp, "w") as f:
            json.dump({"roots": roots, "examples": a.examples, "reps": a.reps, "checks": rows},
                      f, indent=1)
        os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
