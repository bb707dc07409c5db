"""What npformer.fast's elementwise variants buy: each variant alone, and a whole training step.

    python -m benchmarks.elementwise                          # base, 1 and 2 threads
    python -m benchmarks.elementwise --configs small,base,gpt2s-cpu --threads 1,2 --out DIR

Two tables, every thread count in the same process, one after another:

1. Each variant alone (forward + backward of one layer's pass, at the config's shapes): the plain
   functions of npformer.layers, the fast ones on 1 thread (fused passes, cache blocks) and on N
   threads; and the attention's q, k, v projections as three GEMMs (npformer's layout) against one
   packed GEMM (GPT-2's q|k|v). Timed in interleaved rounds, the settle wait of
   benchmarks/isolation.py before every sample. Ratio = fast time / plain time, the median of
   per-round ratios.
2. The training step (forward, cross entropy, backward, Adam) of one model, plain vs accelerated
   (npformer.fast.accelerate on the model and its loss), same weights and inputs, interleaved the
   same way; the BLAS and Adam run on the same N threads in both.

Each figure is given as wall time and, in brackets, the CPU time of all this process's threads:
on a machine other processes load, wall-time gains from a second thread need a free core, while
the CPU time still shows what fusing passes saved (and what splitting costs in overhead).

The load on the machine is measured before, during and after (benchmarks/load.py) and printed:
a run on a loaded machine says so, and its ratios are only indicative.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable

import numpy as np

from benchmarks import load as load_meter
from benchmarks.ab_rounds import add_ab_arguments, interleave, paired_ratio, parsed_ab_arguments, write_results
from benchmarks.configs import CONFIGS


def variant_jobs(cfg, threads: int, dtype: str = "float32") -> dict[str, dict[str, Callable]]:
    """{variant: {"plain": fn, "fast-1": fn, f"fast-{threads}": fn}}: forward + backward of each
    elementwise pass at the config's training shapes (rows = batch x length)."""
    from npformer.fast import activations as fa
    from npformer.fast import dropout as fd
    from npformer.fast import layernorm as fl
    from npformer.fast import loss as fce
    from npformer.fast import softmax as fs
    from npformer.layers import activations as pa
    from npformer.layers import attention as pat
    from npformer.layers import dropout as pd
    from npformer.layers import layernorm as pl
    from npformer.layers import loss as pce

    f = cfg.model_fields
    D, F, V, H = f["d_model"], f["d_ff"], f["vocab_size"], f["num_heads"]
    B, T = cfg.batch, cfg.tgt_len
    rng = np.random.default_rng(0)
    dt = np.dtype(dtype)

    def arr(*shape):
        return rng.standard_normal(shape).astype(dt)

    x_ff, g_ff = arr(B, T, F), arr(B, T, F)
    x_d, g_d, gamma, beta = arr(B, T, D), arr(B, T, D), arr(D), arr(D)
    q, k, g_w = arr(B, H, T, D // H), arr(B, H, T, D // H), arr(B, H, T, T)
    keep = np.tril(np.ones((T, T), dtype=bool))[None, None]
    logits, targets = arr(B * T, V), rng.integers(0, V, B * T)
    mask = rng.random((B, T, F)) >= 0.1
    act = f.get("activation", "relu")
    p_fwd, p_bwd = pa.ACTIVATION_PAIRS[act]
    f_fwd, f_bwd = fa.FAST_PAIRS[act]

    def plain_act():
        y, c = p_fwd(x_ff)
        p_bwd(g_ff, c)

    def plain_ln():
        y, c = pl.layernorm_forward(x_d, gamma, beta)
        pl.layernorm_backward(g_d, c)

    def plain_sm():
        w, c = pat.attention_weights_forward(q, k, keep)
        pat.attention_weights_backward(g_w, c)

    def plain_ce():
        loss, c = pce.cross_entropy_forward(logits, targets)
        pce.cross_entropy_backward(np.asarray(1.0, dtype=dt), c)

    def plain_do():
        y, c = pd.dropout_forward(x_ff, 0.1, mask)
        pd.dropout_backward(g_ff, c)

    def fast(n):
        def act_():
            y, c = f_fwd(x_ff, n)
            f_bwd(g_ff, c, n)

        def ln_():
            y, c = fl.layernorm_forward(x_d, gamma, beta, 1e-5, n)
            fl.layernorm_backward(g_d, c, n)

        def sm_():
            w, c = fs.attention_weights_forward(q, k, keep, n)
            fs.attention_weights_backward(g_w, c, n)

        def ce_():
            loss, c = fce.cross_entropy_forward(logits, targets, threads=n)
            fce.cross_entropy_backward(np.asarray(1.0, dtype=dt), c, n)

        def do_():
            y, c = fd.dropout_forward(x_ff, 0.1, mask, n)
            fd.dropout_backward(g_ff, c, n)
        return {act: act_, "layernorm": ln_, "attention softmax": sm_, "cross entropy": ce_,
                "dropout apply": do_}

    plain = {act: plain_act, "layernorm": plain_ln, "attention softmax": plain_sm,
             "cross entropy": plain_ce, "dropout apply": plain_do}
    f1, fn = fast(1), fast(threads)
    out = {}
    for name in plain:
        out[name] = {"plain": plain[name], "fast-1": f1[name]}
        if threads > 1:
            out[name][f"fast-{threads}"] = fn[name]
    out["q|k|v GEMMs"] = qkv_jobs(B * T, D, dt, rng)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    out["dropout draw"] = {"plain": lambda: rng_a.random(x_ff.shape) >= 0.1,
                           "fast-1": lambda: fd.draw_keep_mask(rng_b, x_ff.shape, 0.1)}
    return out


def qkv_jobs(N: int, D: int, dt, rng) -> dict[str, Callable]:
    """The three projections of self-attention, forward and backward products, as npformer runs
    them ("plain": q_proj, k_proj, v_proj, three GEMMs each way, dx summed) and packed as GPT-2
    stores them ("packed": W = [W_q; W_k; W_v] concatenated each step, as the weights change,
    then one (N, D) x (D, 3D) GEMM forward and one each for dx and dW)."""
    x = rng.standard_normal((N, D)).astype(dt)
    Ws = [rng.standard_normal((D, D)).astype(dt) for _ in range(3)]
    G = rng.standard_normal((N, 3 * D)).astype(dt)
    gs = [np.ascontiguousarray(G[:, i * D:(i + 1) * D]) for i in range(3)]

    def plain():
        for W in Ws:
            x @ W.T                                                    # q, k, v
        dx = gs[0] @ Ws[0]
        dx += gs[1] @ Ws[1]
        dx += gs[2] @ Ws[2]
        for g in gs:
            g.T @ x                                                    # dW_q, dW_k, dW_v

    def packed():
        W = np.concatenate(Ws)                                         # (3D, D)
        x @ W.T                                                        # q|k|v
        G @ W                                                          # dx
        G.T @ x                                                        # dW (3D, D)
    return {"plain": plain, "packed": packed}


def step_jobs(cfg, threads: int, dtype: str = "float32") -> dict[str, Callable]:
    """{"plain": step, "fast": step}: one training step (forward, loss, backward, Adam) of two
    copies of one model, the second accelerated on `threads` threads."""
    from benchmarks.backends import make_inputs, np_model
    from npformer.fast.accelerate import accelerate
    from npformer.fast.adam import BlockedAdam
    from npformer.layers.loss import CrossEntropyLoss

    tcfg = cfg.transformer_config(dtype)
    x = make_inputs(cfg, tcfg)
    jobs = {}
    for name in ("plain", "fast"):
        model = np_model(cfg.model, tcfg)
        loss = CrossEntropyLoss()
        if name == "fast":
            accelerate(model, threads)
            accelerate(loss, threads)
        opt = BlockedAdam(model.named_parameters(), lr=1e-4, threads=threads)

        def step(model=model, loss=loss, opt=opt):
            model.train()
            model.zero_grad()
            logits = model(x.src, x.tgt_in) if cfg.model == "seq2seq" else model(x.tgt_in)
            loss_v = loss(logits, x.tgt_out)
            model.backward(loss.backward())
            opt.step()
            return loss_v
        jobs[name] = step
    return jobs


def _report(cname: str, n: int, variant: str, res: dict) -> dict:
    others = [k for k in res if k != "plain"]
    row = {"config": cname, "threads": n, "variant": variant,
           "wall_ms": {k: v["wall_ms"] for k, v in res.items()},
           "cpu_ms": {k: v["cpu_ms"] for k, v in res.items()},
           "wall_ratio_vs_plain": {k: paired_ratio(res, k, "plain", "wall_samples") for k in others},
           "cpu_ratio_vs_plain": {k: paired_ratio(res, k, "plain", "cpu_samples") for k in others}}
    cells = "  ".join(f"{k} {res[k]['wall_ms']:8.2f} ({res[k]['cpu_ms']:8.2f})" for k in res)
    rats = "  ".join(f"{k}/plain {row['wall_ratio_vs_plain'][k]:.2f} "
                     f"({row['cpu_ratio_vs_plain'][k]:.2f})" for k in others)
    print(f"  {variant:>18}  {cells}   {rats}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.elementwise", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_ab_arguments(p, configs="base", repeats=15)
    p.add_argument("--no-steps", action="store_true", help="only the per-variant table")
    p.add_argument("--no-variants", action="store_true", help="only the training-step table")
    args = p.parse_args(argv)
    from npformer.training.blas import set_blas_threads

    names, thread_counts = parsed_ab_arguments(p, args)

    print("median ms per call: wall (CPU of all this process's threads); ratios are medians of "
          "per-round ratios", flush=True)
    before = load_meter.sample(1.0)
    meter = load_meter.LoadMeter()
    results = []
    for cname in names:
        cfg = CONFIGS[cname]
        print(f"\n{cfg.describe()}", flush=True)
        for n in thread_counts:
            set_blas_threads(n)
            print(f"\n  {n} thread(s) (BLAS and the fast variants)", flush=True)
            if not args.no_variants:
                for variant, fns in variant_jobs(cfg, n).items():
                    results.append(_report(cname, n, variant,
                                           interleave(fns, args.repeats, max_time=10.0)))
            if not args.no_steps:
                jobs = step_jobs(cfg, n)
                results.append(_report(cname, n, "TRAIN STEP",
                                       interleave(jobs, args.repeats, max_time=120.0)))
    stamp = load_meter.summarize(before, meter.others(), load_meter.sample(1.0))
    print(f"\n{stamp['stamp']}")
    if args.out:
        path = write_results(args.out, {"results": results, "load": stamp, "argv": sys.argv[1:]})
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
