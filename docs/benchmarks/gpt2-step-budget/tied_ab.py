"""The backward of GPT-2 small's tied output projection and token embedding alone (2 x 64 rows,
50257 x 768 float32 table, LazyZeroParameter as under FusedAdam), with the class's methods
("before") and npformer.fast.grad_in_place's ("after"), in interleaved rounds, CPU time.

    OPENBLAS_NUM_THREADS=1 python docs/benchmarks/gpt2-step-budget/tied_ab.py [--rounds 15]

Each sample: zero_grad, the embedding's and the projection's forwards (untimed), then the timed
part: the projection's backward (dx = G W and dW = G^T x, into `.grad`) and the embedding's
backward (its rows added into the same `.grad`), as CausalLM.backward runs them. Also one
Linear(768, 3072) and one Linear(3072, 768) backward (24 of each per step).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    from npformer.fast.accelerate import accelerate, restore_plain
    from npformer.fast.lazy_grad import lazy_zero_grad
    from npformer.layers.embedding import Embedding
    from npformer.layers.linear import Linear

    rng = np.random.default_rng(0)
    emb = Embedding(50257, 768)
    proj = Linear(768, 50257, bias=False)
    proj.weight = emb.weight
    ff = [Linear(768, 3072), Linear(3072, 768)]
    params = [("w", emb.weight)] + [(f"{i}{n}", p) for i, m in enumerate(ff)
                                    for n, p in m.named_parameters()]
    lazy_zero_grad(params)
    ids = rng.integers(0, 50257, size=(2, 64))
    g_logits = rng.standard_normal((2, 64, 50257), dtype=np.float32)
    h = rng.standard_normal((2, 64, 768), dtype=np.float32)
    g_h = rng.standard_normal((2, 64, 768), dtype=np.float32)
    xs = [rng.standard_normal((2, 64, m.in_features), dtype=np.float32) for m in ff]
    gs = [rng.standard_normal((2, 64, m.out_features), dtype=np.float32) for m in ff]
    mods = [emb, proj, *ff]

    def sample(fast: bool):
        for m in mods:
            accelerate(m, 1) if fast else restore_plain(m)
        for _, p in params:
            p.zero_grad()
        emb(ids)
        proj(h)
        for m, x in zip(ff, xs):
            m(x)
        t = time.process_time()
        proj.backward(g_logits)
        emb.backward(g_h)
        t1 = time.process_time()
        for m, g in zip(ff, gs):
            m.backward(g)
        t2 = time.process_time()
        return t1 - t, t2 - t1

    res = {"before": [], "after": []}
    load0 = os.getloadavg()
    for r in range(args.rounds + 1):
        for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
            s = sample(name == "after")
            if r:
                res[name].append(s)
    load1 = os.getloadavg()
    b, a = np.array(res["before"]), np.array(res["after"])
    if os.environ.get("TIED_AB_SAMPLES"):
        print(np.round(1e3 * b).T, np.round(1e3 * a).T)
    print(f"load average {load0[0]:.2f} -> {load1[0]:.2f}; {args.rounds} rounds; CPU ms, median")
    for i, what in enumerate(("tied projection + embedding backward", "d_ff pair of Linear backwards")):
        print(f"{what:38s} before {1e3 * np.median(b[:, i]):7.1f}  after {1e3 * np.median(a[:, i]):7.1f}"
              f"  after/before {np.median(a[:, i] / b[:, i]):.3f} "
              f"(IQR {np.percentile(a[:, i] / b[:, i], 25):.3f}-{np.percentile(a[:, i] / b[:, i], 75):.3f})")


if __name__ == "__main__":
    main()
