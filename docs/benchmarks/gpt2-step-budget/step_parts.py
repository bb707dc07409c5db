"""GPT-2 small's fast training step (np-f32 as `python -m benchmarks` builds it, 2 x 64, 1 thread),
split by CPU time inside the real step: every Linear product (forward, dx, dW: the products are
re-run here exactly as linear_forward / linear_backward write them), FusedAdam's step, the
embedding's backward, and the rest (elementwise passes, attention core, loss, gradient copies,
Python).

    OPENBLAS_NUM_THREADS=1 python docs/benchmarks/gpt2-step-budget/step_parts.py [--steps 8]

The first step is a warm-up; medians over the others.
"""
from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args()
    import npformer.fast.linear as fast_linear
    import npformer.layers.embedding as E
    import npformer.layers.linear as L
    from benchmarks.backends import np_model
    from benchmarks.configs import get_config
    from npformer.fast.accelerate import accelerate
    from npformer.fast.fused_adam import FusedAdam
    from npformer.layers.loss import CrossEntropyLoss

    acc = defaultdict(float)
    plain_fwd, plain_bwd, plain_emb = L.linear_forward, L.linear_backward, E.embedding_backward

    def timed(key, fn):
        def run(*a):
            c = time.process_time()
            out = fn(*a)
            acc[key(*a)] += time.process_time() - c
            return out
        return run

    shape = lambda W: "D->V" if W.shape[0] > 4096 else "other"          # noqa: E731
    L.linear_forward = timed(lambda x, W, b: f"products fwd {shape(W)}", plain_fwd)
    L.linear_backward = timed(lambda g, c: f"products bwd {shape(c.W)}", plain_bwd)
    E.embedding_backward = timed(lambda g, c: "embedding dW (dense)", plain_emb)
    fast_linear.linear_forward = L.linear_forward              # few_rows_linear_forward's fallback
    bc = get_config("gpt2s-cpu")
    model = fast_linear.use_few_rows_linear(np_model(bc.model, bc.transformer_config("float32")))
    loss = CrossEntropyLoss()
    accelerate(model, 1)
    accelerate(loss, 1)
    opt = FusedAdam(model.named_parameters(), lr=1e-4, threads=1)
    ids = np.random.default_rng(0).integers(0, bc.model_fields["vocab_size"], size=(2, 65))
    rows = []
    load0 = os.getloadavg()
    for s in range(args.steps + 1):
        acc.clear()
        c = time.process_time()
        model.zero_grad()
        loss.forward(model.forward(ids[:, :-1]), ids[:, 1:])
        model.backward(loss.backward())
        c1 = time.process_time()
        opt.step()
        c2 = time.process_time()
        acc["FusedAdam step"] = c2 - c1
        acc["whole step"] = c2 - c
        if s:
            rows.append(dict(acc))
    load1 = os.getloadavg()
    keys = sorted(rows[0])
    med = {k: float(np.median([r.get(k, 0.0) for r in rows])) for k in keys}
    parts = sum(v for k, v in med.items() if k != "whole step")
    med["rest (step - parts)"] = med["whole step"] - parts
    print(f"load average {load0[0]:.2f} -> {load1[0]:.2f}; {args.steps} steps; CPU ms, median")
    for k, v in med.items():
        print(f"{k:28s} {1e3 * v:8.1f} ms  {100 * v / med['whole step']:5.1f} %")


if __name__ == "__main__":
    main()
