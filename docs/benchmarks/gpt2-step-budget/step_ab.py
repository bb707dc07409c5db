"""GPT-2 small's training step (gpt2s-cpu, 2 x 64) with and without npformer.fast.grad_in_place, in
one process, interleaved rounds (benchmarks.ab_rounds.interleave: order reversed every other round,
the settle wait before every sample, wall and CPU time, paired ratios).

    OPENBLAS_NUM_THREADS=1 python docs/benchmarks/gpt2-step-budget/step_ab.py [--rounds 9] [--out F]

The step is np-f32's train_step as `python -m benchmarks` builds it at 1 thread (npformer.fast's
methods through accelerate, FusedAdam, every Linear on few_rows_linear_forward): zero_grad,
forward, loss, backward, Adam. "before": the Linear and Embedding modules back on their class's
methods (the step before this change); "after": accelerate's methods, which now include them.
Also prints tracemalloc's peak above the start of one step of each (the benchmark's `peak MiB`
is measured the same way).
"""
from __future__ import annotations

import argparse
import json
import os
import tracemalloc

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--out")
    args = ap.parse_args()
    from benchmarks.ab_rounds import interleave, paired_ratio
    from benchmarks.backends import np_model
    from benchmarks.configs import get_config
    from npformer.fast.accelerate import accelerate
    from npformer.fast.fused_adam import FusedAdam
    from npformer.fast.linear import use_few_rows_linear
    from npformer.layers.embedding import Embedding
    from npformer.layers.linear import Linear
    from npformer.layers.loss import CrossEntropyLoss

    bc = get_config("gpt2s-cpu")
    model = use_few_rows_linear(np_model(bc.model, bc.transformer_config("float32")))
    loss = CrossEntropyLoss()
    accelerate(model, 1)
    accelerate(loss, 1)
    opt = FusedAdam(model.named_parameters(), lr=1e-4, threads=1)
    ids = np.random.default_rng(0).integers(0, bc.model_fields["vocab_size"], size=(2, 65))
    switched = [m for _, m in model.named_modules() if type(m) in (Linear, Embedding)]

    def step(fast: bool):
        def run():
            if not fast:
                for m in switched:                             # the class's methods again
                    m.__dict__.pop("forward", None)
                    m.__dict__.pop("backward", None)
            try:
                model.zero_grad()
                logits = model.forward(ids[:, :-1])
                loss.forward(logits, ids[:, 1:])
                model.backward(loss.backward())
                opt.step()
            finally:
                accelerate(model, 1)
        return run

    fns = {"before": step(False), "after": step(True)}
    peaks = {}
    for name, fn in fns.items():
        fn()
        tracemalloc.start()
        fn()
        peaks[name] = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
    load0 = os.getloadavg()
    res = interleave(fns, repeats=args.rounds, max_time=1800.0)
    load1 = os.getloadavg()
    out = {"load": [load0, load1], "rounds": len(res["after"]["wall_samples"]),
           "tracemalloc peak MiB": peaks}
    for key in ("wall_ms", "cpu_ms"):
        out[key] = {n: res[n][key] for n in res}
        samples = key.replace("_ms", "_samples")
        out[key + " after/before"] = paired_ratio(res, "after", "before", samples)
    print(json.dumps(out, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({**out, "samples": {n: {k: res[n][k] for k in ("wall_samples", "cpu_samples")}
                                          for n in res}}, f, indent=1)


if __name__ == "__main__":
    main()
