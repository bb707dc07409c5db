"""Scaling sweeps over sequence length and d_model, plotted.

Sequence-length sweep: d_model 64, 4 heads, d_ff 256, 2+2 layers, batch 2, source length = target
length = n. Per token and attention block, the projections and the feed-forward cost a constant
(24 d_model^2 FLOPs-ish per layer) while attention costs 4 n d_model: time per token grows linearly in
n, total time quadratically, and attention's share of the FLOPs passes 1/2 near n = 6 d_model (384
here), inside the swept range. The plot shows measured time per token next to the formula's split.

d_model sweep: 2+2 layers, heads = d_model / 32, d_ff = 4 d_model, batch 4, n = 64: how close each
backend gets to the matmul peak as the matrices grow.
"""
from __future__ import annotations

import time
from typing import Any

from benchmarks import flops as F
from benchmarks.backends import get_backend, make_inputs, make_session, master_weights
from benchmarks.configs import BenchConfig
from benchmarks.memory import measure_peak
from benchmarks.timing import time_numpy, time_torch

SEQ_LENGTHS = (16, 32, 64, 128, 256, 512, 1024)
SEQ_LENGTHS_QUICK = (16, 64, 256)
D_MODELS = (64, 128, 256, 512)
D_MODELS_QUICK = (64, 256)


def seq_config(n: int) -> BenchConfig:
    return BenchConfig(f"seq{n}", "seq2seq", batch=2, src_len=n, tgt_len=n, gen_batch=1, gen_tokens=1,
                       model_fields=dict(d_model=64, num_heads=4, d_ff=256, num_encoder_layers=2,
                                         num_decoder_layers=2, vocab_size=1000,
                                         max_len=max(512, n), dropout=0.1))


def dmodel_config(d: int) -> BenchConfig:
    return BenchConfig(f"d{d}", "seq2seq", batch=4, src_len=64, tgt_len=64, gen_batch=1, gen_tokens=1,
                       model_fields=dict(d_model=d, num_heads=max(2, d // 32), d_ff=4 * d,
                                         num_encoder_layers=2, num_decoder_layers=2, vocab_size=1000,
                                         max_len=512, dropout=0.1))


def _point(bc: BenchConfig, backends: list[str], workload: str, threads: int, repeats: int,
           max_time: float, memory: bool) -> list[dict[str, Any]]:
    tcfg = bc.transformer_config("float32")
    inputs, master = make_inputs(bc, tcfg), master_weights(bc)
    fb = F.forward_flops(tcfg, bc.model, bc.batch, bc.src_len, bc.tgt_len)
    mult = 1 if workload == "forward" else 3
    out = []
    for name in backends:
        b = get_backend(name)
        row: dict[str, Any] = {"backend": name, "config": bc.to_dict(), "status": "ok",
                               "flops": fb.total * mult,
                               "flops_breakdown": {k: v * mult for k, v in fb.as_dict().items()}}
        try:
            s = make_session(bc, b, master, inputs, threads)
            fn = s.fn(workload)
            kw = dict(warmup=1, repeats=repeats, max_time=max_time)
            t = (time_numpy(fn, **kw) if b.family == "numpy"
                 else time_torch(fn, threads=threads, cuda=b.cuda, **kw))
            row["timing"] = t.as_dict()
            row["gflops"] = row["flops"] / t.median / 1e9
            row["ms_per_token"] = t.median * 1e3 / (bc.batch * bc.tgt_len)
            if memory:
                row["memory"] = measure_peak(fn, b.memory_kind)
            s.close()
        except Exception as e:  # noqa: BLE001 - report and go on
            row.update(status="error", error=f"{type(e).__name__}: {e}")
        out.append(row)
    return out


def run_sweeps(backends: list[str], threads: int, quick: bool, workload: str = "fwd_bwd",
               memory: bool = True, log=print, lengths=None, d_models=None) -> dict[str, Any]:
    repeats, max_time = (2, 2.0) if quick else (5, 8.0)
    t0 = time.perf_counter()
    seq = []
    for n in lengths or (SEQ_LENGTHS_QUICK if quick else SEQ_LENGTHS):
        for r in _point(seq_config(n), backends, workload, threads, repeats, max_time, memory):
            r["n"] = n
            seq.append(r)
            if r["status"] == "ok":
                log(f"[sweep seq] n={n:4d} {r['backend']:>8}: {r['timing']['median'] * 1e3:8.2f} ms "
                    f"{r['gflops']:6.1f} GFLOP/s")
    dm = []
    for d in d_models or (D_MODELS_QUICK if quick else D_MODELS):
        for r in _point(dmodel_config(d), backends, workload, threads, repeats, max_time, False):
            r["d_model"] = d
            dm.append(r)
            if r["status"] == "ok":
                log(f"[sweep d_model] d={d:4d} {r['backend']:>8}: {r['timing']['median'] * 1e3:8.2f} ms "
                    f"{r['gflops']:6.1f} GFLOP/s")
    return {"workload": workload, "backends": backends, "seconds": time.perf_counter() - t0,
            "seq_len": seq, "d_model": dm,
            "seq_setup": "d_model 64, 4 heads, d_ff 256, 2+2 layers, batch 2, src = tgt = n",
            "d_model_setup": "2+2 layers, heads d/32, d_ff 4d, batch 4, src = tgt = 64"}


def _log2_axis(ax, values) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sorted(set(values))))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())


def plot_sweeps(sweeps: dict[str, Any], peak_f32: float | None, out_dir: str,
                stamp: str | None = None) -> list[str]:
    """The two sweep figures; `stamp` (threads, load, date) is written along each one's bottom."""
    from benchmarks.files import save_figure
    from benchmarks.report import pyplot, stamp_figure

    plt = pyplot()
    if plt is None:
        return []
    paths = []
    seq = [r for r in sweeps["seq_len"] if r["status"] == "ok"]
    if seq:
        fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4.4))
        for b in sweeps["backends"]:
            pts = sorted((r["n"], r) for r in seq if r["backend"] == b)
            if not pts:
                continue
            ns = [n for n, _ in pts]
            a1.plot(ns, [r["ms_per_token"] for _, r in pts], "o-", label=b)
            a3.loglog(ns, [r["timing"]["median"] for _, r in pts], "o-", label=b)
        ns = sorted({r["n"] for r in seq})
        first = {r["n"]: r for r in seq}
        tok = [first[n]["config"]["batch"] * n for n in ns]
        lin = [(first[n]["flops_breakdown"]["total"] - first[n]["flops_breakdown"]["attention"]) / t
               / 1e6 for n, t in zip(ns, tok)]
        att = [first[n]["flops_breakdown"]["attention"] / t / 1e6 for n, t in zip(ns, tok)]
        a2.stackplot(ns, lin, att, labels=["projections + FFN + output (O(n) total)",
                                           "attention QK^T, AV (O(n^2) total)"], alpha=0.7)
        a1.set(xlabel="sequence length n (source = target)", ylabel="ms per target token",
               title=f"measured {sweeps['workload']}: time per token")
        a2.set(xlabel="sequence length n", ylabel="MFLOP per target token",
               title="formula: matmul FLOPs per token")
        if ns:
            t0 = min(r["timing"]["median"] for r in seq if r["n"] == ns[0])
            a3.loglog(ns, [t0 * n / ns[0] for n in ns], "k:", lw=1, label="slope 1 (linear)")
            a3.loglog(ns, [t0 * (n / ns[0]) ** 2 for n in ns], "k--", lw=1, label="slope 2 (quadratic)")
        a3.set(xlabel="sequence length n", ylabel="seconds per call", title="total time (log-log)")
        for a in (a1, a2, a3):
            _log2_axis(a, ns)
            a.legend(fontsize=7)
        stamp_figure(fig, stamp or 'load not measured')
        p = f"{out_dir}/sweep_seq_len.png"
        save_figure(fig, p)
        plt.close(fig)
        paths.append(p)
    dm = [r for r in sweeps["d_model"] if r["status"] == "ok"]
    if dm:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
        for b in sweeps["backends"]:
            pts = sorted((r["d_model"], r) for r in dm if r["backend"] == b)
            if not pts:
                continue
            ds = [d for d, _ in pts]
            a1.plot(ds, [r["gflops"] for _, r in pts], "o-", label=b)
            a2.loglog(ds, [r["timing"]["median"] for _, r in pts], "o-", label=b)
        if peak_f32:
            a1.axhline(peak_f32, color="k", ls="--", lw=1, label="fp32 matmul peak")
        a1.set(xlabel="d_model", ylabel="GFLOP/s", title=f"{sweeps['workload']} throughput")
        a2.set(xlabel="d_model", ylabel="seconds per call", title="time (log-log)")
        for a in (a1, a2):
            _log2_axis(a, [r["d_model"] for r in dm])
            a.legend(fontsize=7)
        stamp_figure(fig, stamp or 'load not measured')
        p = f"{out_dir}/sweep_d_model.png"
        save_figure(fig, p)
        plt.close(fig)
        paths.append(p)
    return paths
