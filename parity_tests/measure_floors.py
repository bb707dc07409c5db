"""Measure the numerical floor of npformer vs torchformer over the parity suite's own distribution.

    python -m parity_tests.measure_floors [--profile thorough] [--keep rows.jsonl] [pytest args...]

Runs the parity suite with NPFORMER_PARITY_MEASURE set (every comparison records its error
max|got - ref| / max(1, max|ref|) and nothing raises), then prints, per dtype and quantity, the
largest error, the 99th percentile and where the largest came from. The FLOORS table in
parity_tests/harness/tolerances.py is set from this output (tolerance = floor x SAFETY).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SKIP = ("test_planted_bugs.py", "test_harness.py")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--profile", default="thorough")
    ap.add_argument("--keep", help="also write the raw rows (JSON lines) here")
    ap.add_argument("--rows", help="only aggregate an existing rows file (no pytest run)")
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    if a.rows:
        path = a.rows
    else:
        path = a.keep or tempfile.mktemp(suffix=".jsonl")
        open(path, "w").close()
        env = dict(os.environ, NPFORMER_PARITY_MEASURE=path, NPFORMER_HYPOTHESIS_PROFILE=a.profile)
        files = a.pytest_args or sorted(os.path.join(here, f) for f in os.listdir(here)
                                        if f.startswith("test_") and f.endswith(".py")
                                        and f not in SKIP)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:warnings",
               *files]
        print("running:", " ".join(cmd), f"(profile {a.profile})", flush=True)
        subprocess.run(cmd, env=env, check=False)
    rows = [json.loads(line) for line in open(path)]
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["dtype"], r["quantity"])].append(r)
    print(f"\n{len(rows)} comparisons\n")
    print(f"{'dtype':8} {'quantity':18} {'n':>7} {'p50':>9} {'p99':>9} {'max':>9}  worst")
    for (dt, q), rs in sorted(groups.items()):
        errs = np.array([r["err"] for r in rs])
        w = max(rs, key=lambda r: r["err"])
        print(f"{dt:8} {q:18} {len(rs):7d} {np.percentile(errs, 50):9.2e} "
              f"{np.percentile(errs, 99):9.2e} {errs.max():9.2e}  {w['test'].split('::')[-1]} "
              f"{w['name']}")
    print("\nworst cases:")
    for (dt, q), rs in sorted(groups.items()):
        w = max(rs, key=lambda r: r["err"])
        print(f"  {dt} {q}: {w['err']:.3e} in {w['test']} :: {w['name']} :: {w['case']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
