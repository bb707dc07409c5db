"""torchformer vs stock torch.nn.Transformer on the same configuration, CPU float32, interleaved.

    python -m benchmarks.profile_torchformer                       # timing table, all workloads
    python -m benchmarks.profile_torchformer --rounds 15 --only fwd_bwd/train
    python -m benchmarks.profile_torchformer --profile fwd_bwd/train --impl tf   # torch.profiler table

The goal this script checks: torchformer must not be slower than `torch.nn.Transformer` on the
same configuration and device. Both models are whole encoder-decoder models with the same weights:
torchformer.Transformer, and benchmarks/stock.py's StockSeq2Seq (token embeddings x sqrt(d_model) +
sinusoidal positions + dropout + torch.nn.Transformer + output projection tied to the embeddings).
Token ids are random and never padding, but both sides build and apply their key-padding masks
(pad_id 0), as the benchmark does.

Configuration: the paper's base model (d_model 512, 8 heads, 6+6 layers, d_ff 2048, dropout 0.1,
vocabulary 4096 shared and tied), batch 8, source and target length 64, float32, CPU,
torch.set_num_threads(2) (override with --threads).

Workloads, each "<what>/<mode>" (mode: train = dropout active, eval = dropout off):
  forward/eval, forward/train        logits under torch.no_grad()
  fwd_bwd/eval, fwd_bwd/train        zero_grad, logits, mean cross entropy, backward
  step/eval, step/train              fwd_bwd + torch.optim.Adam step (lr 1e-4)

Timing: the machine is shared, so the two models run interleaved: every round times `--inner` calls of
one, then of the other (the order flips every round), after warm-up. Reported: the median per call of
each, the ratio of the medians, and the median of the per-round ratios tf/nn (paired; cancels slow
drifts of background load), with its spread (25th-75th percentile). `--clock cpu --threads 1` times
this process's CPU time on one thread instead: far less sensitive to the other processes on a shared
machine, handy while hunting differences of a few percent (the goal is judged on wall time, 2 threads).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

BASE = dict(d_model=512, num_heads=8, d_ff=2048, num_encoder_layers=6, num_decoder_layers=6,
            vocab_size=4096, max_len=512, dropout=0.1, share_embeddings=True, tie_embeddings=True)
WORKLOADS = ("forward/eval", "forward/train", "fwd_bwd/eval", "fwd_bwd/train", "step/eval",
             "step/train")
IMPLS = ("tf", "nn")     # torchformer, stock torch.nn


def build(batch: int, length: int, seed: int = 0):
    """Both models with the same weights (npformer's seed-0 initial state) and the same ids."""
    from benchmarks.stock import build_stock, load_from_twin_state
    from npformer.models.config import TransformerConfig
    from npformer.models.transformer import Transformer as NpTransformer
    from torchformer.models.transformer import Transformer

    cfg = TransformerConfig(**BASE)
    state = dict(NpTransformer(cfg, seed=seed).state_dict())
    tf = Transformer(cfg, seed=seed)
    tf.load_state_dict(state)
    nn_model = build_stock(cfg, "seq2seq")
    load_from_twin_state(nn_model, state)
    rng = np.random.default_rng(seed)
    ids = lambda: torch.from_numpy(rng.integers(3, cfg.tgt_vocab, (batch, length)))  # noqa: E731
    src, tgt_in, tgt_out = ids(), ids(), ids()
    tf.eval(), nn_model.eval()
    with torch.no_grad():
        diff = (tf(src, tgt_in) - nn_model(src, tgt_in)).abs().max().item()
    return cfg, {"tf": tf, "nn": nn_model}, (src, tgt_in, tgt_out), diff


def make_call(model, opt, workload: str, data, vocab: int):
    """A no-argument callable running one call of `workload` on `model`."""
    what, mode = workload.split("/")
    src, tgt_in, tgt_out = data
    model.train(mode == "train")

    if what == "forward":
        def call():
            with torch.no_grad():
                return model(src, tgt_in)
        return call

    def fwd_bwd():
        opt.zero_grad(set_to_none=True)
        logits = model(src, tgt_in)                                        # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt_out.reshape(-1))
        loss.backward()
        return loss

    if what == "fwd_bwd":
        return fwd_bwd

    def step():
        loss = fwd_bwd()
        opt.step()
        return loss
    return step


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = CLOCKS["wall"]


def time_calls(call, n: int) -> float:
    t0 = CLOCK()
    for _ in range(n):
        call()
    return (CLOCK() - t0) / n


def pct(xs, q):
    return float(np.percentile(np.asarray(xs), q))


def compare(models, data, vocab, workload, rounds, inner, warmup):
    """Interleaved timing of both models on one workload: {impl: [s per call per round]}."""
    opts = {k: torch.optim.Adam(m.parameters(), lr=1e-4) for k, m in models.items()}
    calls = {k: make_call(m, opts[k], workload, data, vocab) for k, m in models.items()}
    for k in IMPLS:
        models[k].train(workload.endswith("/train"))
        time_calls(calls[k], warmup)
    times = {k: [] for k in IMPLS}
    for r in range(rounds):
        order = IMPLS if r % 2 == 0 else IMPLS[::-1]
        for k in order:
            models[k].train(workload.endswith("/train"))
            times[k].append(time_calls(calls[k], inner))
    return times


def report_line(workload, times):
    tf, nn_ = times["tf"], times["nn"]
    ratios = [a / b for a, b in zip(tf, nn_)]
    mt, mn = statistics.median(tf), statistics.median(nn_)
    return (f"{workload:<14} {mt * 1e3:9.1f} {mn * 1e3:9.1f} {mt / mn:8.3f} "
            f"{statistics.median(ratios):9.3f}  [{pct(ratios, 25):.3f}, {pct(ratios, 75):.3f}]")


def profile(models, data, vocab, workload, impl, calls: int, rows: int):
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as tprofile

    model = models[impl]
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    call = make_call(model, opt, workload, data, vocab)
    time_calls(call, 2)
    with tprofile(activities=[ProfilerActivity.CPU], record_shapes=False) as prof:
        time_calls(call, calls)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--length", type=int, default=64, help="source and target length")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--inner", type=int, default=2, help="calls per timed block")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                    help="wall: elapsed time (the goal's measure); cpu: this process's CPU time "
                         "(with --threads 1 nearly immune to other processes' load)")
    ap.add_argument("--only", nargs="*", choices=WORKLOADS, default=list(WORKLOADS))
    ap.add_argument("--profile", choices=WORKLOADS, help="torch.profiler table of one workload")
    ap.add_argument("--impl", choices=IMPLS, default="tf", help="which model --profile profiles")
    ap.add_argument("--profile-calls", type=int, default=5)
    ap.add_argument("--rows", type=int, default=30)
    args = ap.parse_args(argv)

    global CLOCK
    CLOCK = CLOCKS[args.clock]
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg, models, data, diff = build(args.batch, args.length)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, base config "
          f"(d_model {cfg.d_model}, {cfg.num_heads} heads, {cfg.num_encoder_layers}+"
          f"{cfg.num_decoder_layers} layers, d_ff {cfg.d_ff}, vocab {cfg.tgt_vocab}), batch "
          f"{args.batch} x {args.length}, float32 CPU; eval logits max |tf - nn| = {diff:.2e}")
    if args.profile:
        profile(models, data, cfg.tgt_vocab, args.profile, args.impl, args.profile_calls,
                args.rows)
        return 0
    print(f"{args.rounds} rounds x {args.inner} calls each, interleaved; {args.clock} ms per call "
          f"(medians)")
    print(f"{'workload':<14} {'tf ms':>9} {'nn ms':>9} {'tf/nn':>8} {'paired':>9}  [p25, p75]")
    for w in args.only:
        times = compare(models, data, cfg.tgt_vocab, w, args.rounds, args.inner, args.warmup)
        print(report_line(w, times), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
