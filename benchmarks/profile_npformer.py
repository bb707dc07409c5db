"""Profile npformer's float32 training step against torchformer eager, at the paper's base sizes.

    python -m benchmarks.profile_npformer                   # interleaved timing table
    python -m benchmarks.profile_npformer --cprofile 3      # + cProfile of 3 npformer steps (tottime)
    python -m benchmarks.profile_npformer --per-module 3    # + inclusive time per module class

What is timed: one full training step, the same for both twins and the same as the benchmark's
"train_step" workload: train mode (dropout 0.1 active), zero_grad, forward to logits, mean cross
entropy, backward, Adam (lr 1e-4). Same weights, same token ids.

Configuration ("base", as benchmarks/configs.py): encoder-decoder Transformer, d_model 512, 8 heads,
6+6 layers, d_ff 2048, vocabulary 4096 shared by source and target and tied to the output projection,
batch 8, source and target length 64.

Threads: 2 for numpy's BLAS (OPENBLAS/OMP/MKL_NUM_THREADS, set below before numpy is imported, so run
this as a script or with -m, not from an interpreter that already imported numpy) and
torch.set_num_threads(2). Override with --threads.

The machine is shared, so every round times npformer, torchformer and the float32 matmul peak
(2048^3 numpy matmul) back to back; medians over rounds are reported, plus the median of the per-round
ratio (which cancels slow drifts in background load better than a ratio of medians).
"""
from __future__ import annotations

import os
import sys


def _threads_from_argv(argv) -> int:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--threads="):
            return int(a.split("=", 1)[1])
    return 2


THREADS = _threads_from_argv(sys.argv[1:])
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = str(THREADS)          # read by the BLAS when it loads: before numpy's import

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402

import numpy as np  # noqa: E402

BASE = dict(d_model=512, num_heads=8, d_ff=2048, num_encoder_layers=6, num_decoder_layers=6,
            vocab_size=4096, max_len=512, dropout=0.1, share_embeddings=True, tie_embeddings=True)


def step_flops(cfg, B: int, S: int, T: int) -> int:
    """Matmul FLOPs of one training step (forward x 3), the formula of benchmarks/flops.py."""
    D, F, V = cfg.d_model, cfg.d_ff, cfg.tgt_vocab
    Le, Ld = cfg.num_encoder_layers, cfg.num_decoder_layers
    enc = Le * (8 * B * S * D * D + 4 * B * S * S * D + 4 * B * S * D * F)
    dec = Ld * (8 * B * T * D * D + 4 * B * T * T * D                      # self-attention
                + 4 * B * T * D * D + 4 * B * S * D * D + 4 * B * T * S * D  # cross-attention
                + 4 * B * T * D * F)                                        # feed-forward
    out = 2 * B * T * D * V
    return 3 * (enc + dec + out)


class NumpyStep:
    def __init__(self, cfg, src, tgt_in, tgt_out):
        from npformer.loss import CrossEntropyLoss
        from npformer.optim import Adam
        from npformer.transformer import Transformer

        self.model = Transformer(cfg, seed=0)
        self.loss = CrossEntropyLoss()
        self.opt = Adam(self.model.named_parameters(), lr=1e-4)
        self.src, self.tgt_in, self.tgt_out = src, tgt_in, tgt_out

    def __call__(self) -> float:
        m = self.model
        m.train()
        m.zero_grad()
        logits = m.forward(self.src, self.tgt_in)                        # (B, T, V)
        loss = self.loss.forward(logits, self.tgt_out)
        m.backward(self.loss.backward())
        self.opt.step()
        return float(loss)


class TorchStep:
    def __init__(self, cfg, state, src, tgt_in, tgt_out):
        import torch
        import torch.nn.functional as F

        from torchformer.transformer import Transformer

        self.torch, self.F = torch, F
        self.model = Transformer(cfg, seed=0)
        self.model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v))
                                    for k, v in state.items()})
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.src, self.tgt_in, self.tgt_out = (torch.from_numpy(a) for a in (src, tgt_in, tgt_out))
        self.V = cfg.tgt_vocab

    def __call__(self) -> float:
        self.model.train()
        self.opt.zero_grad(set_to_none=True)
        logits = self.model(self.src, self.tgt_in)                       # (B, T, V)
        loss = self.F.cross_entropy(logits.reshape(-1, self.V), self.tgt_out.reshape(-1))
        loss.backward()
        self.opt.step()
        return loss.item()


def matmul_peak_once(n: int, a, b, c) -> float:
    t0 = time.perf_counter()
    np.matmul(a, b, out=c)
    return 2.0 * n ** 3 / (time.perf_counter() - t0) / 1e9          # GFLOP/s


def timed(fn) -> tuple[float, float]:
    """(wall seconds, process CPU seconds over all threads) of one call."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def per_module_times(model, step, steps: int):
    """Inclusive seconds per (module class, forward/backward), by wrapping each instance's methods."""
    totals = defaultdict(float)
    counts = defaultdict(int)
    wrapped = []
    for _, mod in model.named_modules():
        for meth in ("forward", "backward"):
            orig = getattr(mod, meth, None)
            if orig is None:
                continue

            def wrapper(*a, _orig=orig, _key=(type(mod).__name__, meth), **k):
                t0 = time.perf_counter()
                try:
                    return _orig(*a, **k)
                finally:
                    totals[_key] += time.perf_counter() - t0
                    counts[_key] += 1
            object.__setattr__(mod, meth, wrapper)        # instance attribute shadows the method
            wrapped.append((mod, meth))
    try:
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        wall = time.perf_counter() - t0
    finally:
        for mod, meth in wrapped:
            del mod.__dict__[meth]
    return totals, counts, wall


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=THREADS, help="BLAS and torch threads (2)")
    p.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds (7)")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--length", type=int, default=64, help="source and target length (64)")
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--peak-n", type=int, default=2048, help="square matmul size for the peak (2048)")
    p.add_argument("--no-torch", action="store_true", help="time npformer only")
    p.add_argument("--cprofile", type=int, default=0, metavar="STEPS",
                   help="cProfile this many npformer steps and print the top functions by tottime")
    p.add_argument("--per-module", type=int, default=0, metavar="STEPS",
                   help="inclusive time per module class (forward/backward) over this many steps")
    p.add_argument("--top", type=int, default=30, help="rows of the cProfile table (30)")
    p.add_argument("--cpu-clock", action="store_true",
                   help="cProfile with process CPU time instead of wall time (steadier on a busy "
                        "machine with --threads 1; with more threads it also counts BLAS spinning)")
    args = p.parse_args(argv)

    from npformer.config import TransformerConfig

    cfg = TransformerConfig(**{**BASE, "vocab_size": args.vocab, "dtype": "float32"})
    B, L = args.batch, args.length
    rng = np.random.default_rng(0)
    src, tgt_in, tgt_out = (rng.integers(3, cfg.vocab_size, size=(B, L), dtype=np.int64)
                            for _ in range(3))
    flops = step_flops(cfg, B, L, L)

    np_step = NumpyStep(cfg, src, tgt_in, tgt_out)
    tf_step = None
    if not args.no_torch:
        import torch

        torch.set_num_threads(args.threads)
        tf_step = TorchStep(cfg, np_step.model.state_dict(), src, tgt_in, tgt_out)

    n = args.peak_n
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)

    print(f"config: Transformer d_model={cfg.d_model} heads={cfg.num_heads} layers="
          f"{cfg.num_encoder_layers}+{cfg.num_decoder_layers} d_ff={cfg.d_ff} vocab={cfg.vocab_size} "
          f"(shared+tied) dropout={cfg.dropout}; batch {B} x length {L}; float32")
    print(f"threads: BLAS {os.environ.get('OPENBLAS_NUM_THREADS')}"
          + ("" if tf_step is None else f", torch {tf_step.torch.get_num_threads()}")
          + f"; numpy {np.__version__}; matmul FLOPs per step {flops / 1e9:.1f} G")

    # warm-up (first steps allocate optimizer state and touch every page)
    for _ in range(2):
        np_step()
        if tf_step is not None:
            tf_step()
        matmul_peak_once(n, a, b, c)

    rows = defaultdict(list)
    for r in range(args.rounds):
        rows["peak"].append(max(matmul_peak_once(n, a, b, c) for _ in range(2)))
        wall, cpu = timed(np_step)
        rows["np"].append(wall)
        rows["np_cpu"].append(cpu)
        if tf_step is not None:
            wall, cpu = timed(tf_step)
            rows["tf"].append(wall)
            rows["tf_cpu"].append(cpu)
            rows["ratio"].append(rows["np"][-1] / rows["tf"][-1])
        print(f"  round {r}: np {rows['np'][-1] * 1e3:7.1f} ms (cpu {rows['np_cpu'][-1] * 1e3:7.1f})"
              + ("" if tf_step is None else f"  tf {rows['tf'][-1] * 1e3:7.1f} ms "
                 f"(cpu {rows['tf_cpu'][-1] * 1e3:7.1f})  ratio {rows['ratio'][-1]:.2f}")
              + f"  peak {rows['peak'][-1]:6.1f} GFLOP/s", flush=True)

    med = {k: statistics.median(v) for k, v in rows.items()}
    peak = med["peak"]
    print(f"\nmedians over {args.rounds} rounds (float32 matmul peak {peak:.1f} GFLOP/s, "
          f"numpy {n}^3):")
    print(f"  {'backend':<12} {'step ms':>9} {'cpu ms':>9} {'GFLOP/s':>9} {'of peak':>8}")
    for key, name in (("np", "npformer"), ("tf", "torchformer")):
        if key in med:
            g = flops / med[key] / 1e9
            print(f"  {name:<12} {med[key] * 1e3:9.1f} {med[key + '_cpu'] * 1e3:9.1f} {g:9.1f} "
                  f"{g / peak:8.1%}")
    if "ratio" in med:
        print(f"  npformer / torchformer: {med['np'] / med['tf']:.2f} (ratio of medians), "
              f"{med['ratio']:.2f} (median of per-round ratios)")

    if args.per_module:
        totals, counts, wall = per_module_times(np_step.model, np_step, args.per_module)
        print(f"\ninclusive time per module class over {args.per_module} steps "
              f"(wall {wall * 1e3 / args.per_module:.1f} ms/step; nested classes overlap):")
        for (cls, meth), t in sorted(totals.items(), key=lambda kv: -kv[1]):
            print(f"  {cls:<28} {meth:<9} {t * 1e3 / args.per_module:8.1f} ms/step "
                  f"({counts[(cls, meth)] // args.per_module} calls)")

    if args.cprofile:
        prof = cProfile.Profile(time.process_time) if args.cpu_clock else cProfile.Profile()
        prof.enable()
        for _ in range(args.cprofile):
            np_step()
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(args.top)
        print(f"\ncProfile of {args.cprofile} npformer steps, by tottime "
              f"(a function's tottime includes the numpy operators it runs):")
        print(s.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
