"""npformer's training step in two checkouts of the project, timed in one interleaved run.

    python benchmarks/compare_trees.py --root OLD --root NEW [--configs small,base,gpt2s-cpu] [--threads 1,2]
                                       [--repeats 15] [--workload train_step|forward] [--out FILE.json]

Each root gets a worker process per thread count (PYTHONPATH=root, OMP/OPENBLAS threads fixed before
NumPy loads) that builds the same model from the same seed with that checkout's public API
(`import npformer as nf`) and the speed variants its training loop uses (the optimizer; in trees that
have them, npformer.fast.accelerate's elementwise methods and FusedAdam's fused clipping), and times one
training step (forward, label-smoothed loss, backward, gradient clipping, Adam) per request (with
--workload forward: one forward, the model in eval mode, as the benchmark's forward). The parent asks the
workers for one sample each in turn, so load from other processes falls on every checkout alike,
and waits `--settle` seconds before each sample (OpenBLAS's worker threads spin for about 0.1 s after
a call and would take a core from the next worker's sample); it prints medians, interquartile ranges
and, for every root after the first, the median over rounds of its time / the first root's time.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CONFIGS = {  # the benchmark configs of benchmarks/configs.py, as plain numbers (checkout-independent)
    "small": dict(batch=8, src_len=32, tgt_len=32, d_model=128, num_heads=4, d_ff=512, layers=4,
                  vocab=1000, share=False),
    "base": dict(batch=8, src_len=64, tgt_len=64, d_model=512, num_heads=8, d_ff=2048, layers=6,
                 vocab=4096, share=True),
    # GPT-2 small (CausalLM, GPT-2's layout) at benchmarks/configs.py's CPU-sized batch, 2 x 64
    "gpt2s-cpu": dict(batch=2, src_len=0, tgt_len=64, d_model=768, num_heads=12, d_ff=3072,
                      layers=12, vocab=50257, share=True, causal=True),
}

WORKER = r'''
import json, os, sys, time
import numpy as np
import npformer as nf

THREADS = int(os.environ.get("OMP_NUM_THREADS", "1"))

def make_optimizer(model):
    try:                                            # FusedAdam: clipping in its pass
        from npformer.fast.fused_adam import FusedAdam
        return FusedAdam(model.named_parameters(), lr=1e-4, threads=THREADS)
    except ImportError:
        pass
    try:                                            # the layout with npformer.fast
        from npformer.fast.adam import BlockedAdam
        return BlockedAdam(model.named_parameters(), lr=1e-4)
    except ImportError:                             # the flat layout: Adam blocks and threads itself
        return nf.Adam(model.named_parameters(), lr=1e-4)

def accelerate(*modules):
    try:                                            # the elementwise variants npformer train binds
        from npformer.fast.accelerate import accelerate as bind
    except ImportError:
        return
    for m in modules:
        bind(m, THREADS)

c = json.loads(sys.argv[1])
CAUSAL = c.get("causal", False)
if CAUSAL:                                          # GPT-2's layout, as benchmarks/configs.py
    cfg = nf.gpt2_config(d_model=c["d_model"], num_heads=c["num_heads"], d_ff=c["d_ff"],
                         num_decoder_layers=c["layers"], vocab_size=c["vocab"], max_len=1024,
                         dropout=0.1, attention_dropout=0.1)
    model = nf.CausalLM(cfg, seed=0).train()
else:
    cfg = nf.TransformerConfig(d_model=c["d_model"], num_heads=c["num_heads"], d_ff=c["d_ff"],
                               num_encoder_layers=c["layers"], num_decoder_layers=c["layers"],
                               vocab_size=c["vocab"], max_len=512, dropout=0.1,
                               share_embeddings=c["share"], tie_embeddings=c["share"])
    model = nf.Transformer(cfg, seed=0).train()
rng = np.random.default_rng(0)
src = rng.integers(3, c["vocab"], size=(c["batch"], c["src_len"]))
tgt = rng.integers(3, c["vocab"], size=(c["batch"], c["tgt_len"] + 1))

def logits_of(inputs):
    return model(inputs) if CAUSAL else model(src, inputs)
loss_fn = nf.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
opt = make_optimizer(model)
accelerate(model, loss_fn)
params = model.named_parameters()
FUSED = hasattr(opt, "adopt_gradients")

def train_step():
    model.train()
    logits = logits_of(tgt[:, :-1])
    loss_fn(logits, tgt[:, 1:])
    model.zero_grad()
    model.backward(loss_fn.backward())
    if FUSED:                                       # as the training loop's NumpyStep does
        from npformer.fast.fused_adam import clip_coefficient
        opt.step(grad_scale=clip_coefficient(params, 1.0)[1])
    else:
        nf.clip_grad_norm(params, 1.0)
        opt.step()

def forward():                                      # the benchmark's forward: eval mode
    model.eval()
    logits_of(tgt[:, :-1])

step = forward if c.get("workload") == "forward" else train_step
for _ in range(2):
    step()                                          # warm-up
print("ready", flush=True)
for line in sys.stdin:
    t0 = time.perf_counter()
    step()
    print(time.perf_counter() - t0, flush=True)
'''


def start(root: Path, config: dict, threads: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    p = subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(config)], cwd=root, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        raise RuntimeError(f"--root {root}: the worker did not start (see its error above)")
    return p


def sample(p: subprocess.Popen) -> float:
    p.stdin.write("\n")
    p.stdin.flush()
    return float(p.stdout.readline())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", action="append", required=True, type=Path,
                    help="a checkout of the project (give two or more; the first is the baseline)")
    ap.add_argument("--configs", default="small,base", help=f"from {','.join(CONFIGS)}")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--repeats", type=int, default=15, help="timed samples per root (default 15)")
    ap.add_argument("--settle", type=float, default=0.3,
                    help="seconds to wait before each sample (default 0.3)")
    ap.add_argument("--workload", default="train_step", choices=("train_step", "forward"),
                    help="what one sample times (default train_step)")
    ap.add_argument("--out", type=Path, help="write the samples and medians here (JSON)")
    a = ap.parse_args(argv)
    if len(a.root) < 2:
        ap.error("--root: give at least two checkouts")
    for r in a.root:
        if not (r / "npformer" / "__init__.py").is_file():
            ap.error(f"--root {r}: no npformer package there")
    configs = a.configs.split(",")
    if bad := [c for c in configs if c not in CONFIGS]:
        ap.error(f"--configs: expected names from {','.join(CONFIGS)}, got {','.join(bad)}")
    threads = [int(t) for t in a.threads.split(",")]
    if a.repeats < 2:
        ap.error(f"--repeats: expected at least 2 (an interquartile range needs two samples), "
                 f"got {a.repeats}")
    if not 0 <= a.settle <= 10:
        ap.error(f"--settle: expected seconds in [0, 10], got {a.settle}")
    if a.out is not None and a.out.exists():
        ap.error(f"--out {a.out}: exists; choose a new file")
    results = []
    heads = " ".join(f"{'root ' + str(i) + ' ms':>16}" for i in range(len(a.root)))
    print(f"{'config':8} {'thr':>3} {heads}  ratio to root 0 (median of per-round ratios)")
    for name in configs:
        for t in threads:
            workers = [start(r, dict(CONFIGS[name], workload=a.workload), t) for r in a.root]
            try:
                times = [[] for _ in workers]
                for _ in range(a.repeats):
                    for i, w in enumerate(workers):
                        time.sleep(a.settle)
                        times[i].append(sample(w))
            finally:
                for w in workers:
                    w.stdin.close()
                    w.wait()
            med = [statistics.median(x) for x in times]
            iqr = [statistics.quantiles(x, n=4)[2] - statistics.quantiles(x, n=4)[0] for x in times]
            cells = " ".join(f"{1e3 * m:9.1f} ±{1e3 * q:5.1f}" for m, q in zip(med, iqr))
            # the median of per-round ratios: each round's samples ran back to back, so slow drift
            # in the machine's load cancels in the ratio
            paired = [statistics.median(b / a for a, b in zip(times[0], x)) for x in times[1:]]
            ratios = " ".join(f"{r:.3f}" for r in paired)
            print(f"{name:8} {t:>3} {cells}  {ratios}", flush=True)
            results.append(dict(config=name, threads=t, workload=a.workload, samples_s=times, median_s=med, iqr_s=iqr,
                                paired_ratio_to_first=paired))
    if a.out is not None:
        tmp = a.out.with_name(a.out.name + ".tmp")   # whole or not at all (a script: stdlib only)
        tmp.write_text(json.dumps(dict(roots=[str(r) for r in a.root], results=results), indent=1))
        os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
