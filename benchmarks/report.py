"""Output: a table on stdout, the JSON document, PNG plots (matplotlib, imported lazily)."""
from __future__ import annotations

from typing import Any

from benchmarks import files


def _mib(b) -> str:
    return "-" if b is None else f"{b / 2**20:.1f}"


def _fmt_time(s: float) -> str:
    return f"{s * 1e3:.3g}" if s * 1e3 < 100 else f"{s * 1e3:.0f}"


def format_machine(doc: dict[str, Any]) -> str:
    m, t = doc["machine"], doc["threads"]
    lines = [f"machine: {m['cpu']} | {m['available_cores']} cores available "
             f"({m['logical_cpus']} logical) | {m.get('memory_gib')} GiB | SIMD {','.join(m['cpu_simd'])}",
             f"software: python {m['python']} | numpy {m['numpy']} ({m.get('numpy_blas')}) | "
             f"torch {m.get('torch')} | {m.get('torch_parallel', '')}"
             + (f" | source {m['source']}" if m.get("source") else "")]
    if m.get("gpu"):
        lines.append(f"gpu: {m['gpu']} ({m.get('gpu_memory_gib')} GiB, sm {m.get('gpu_capability')},"
                     f" CUDA {m.get('cuda')})")
    if doc.get("load"):
        lines.append(f"load: {doc['load']['stamp']}")
    blas = ", ".join(f"{b['library']}={b.get('threads')}" for b in t.get("openblas", [])) or "n/a"
    how = ("set by --threads" if t.get("source") == "--threads"
           else "npformer train's default; change with --threads N")
    lines.append(f"threads: {t['requested']} ({how}) | torch intra-op {t.get('torch_intra_op')} "
                 f"inter-op {t.get('torch_inter_op')} | OpenBLAS {blas} | "
                 + " ".join(f"{k}={v}" for k, v in t["env"].items() if v is not None))
    pk = doc["peak"]["peak"]
    lines.append("measured matmul peak: " + ", ".join(
        f"{k} {v['gflops']:.0f} GFLOP/s ({v['library']}, n={v['n']})" for k, v in pk.items()))
    return "\n".join(lines)


def format_table(rows: list[dict[str, Any]], configs: list[dict[str, Any]],
                 header: str | None = None) -> str:
    """One table per configuration; `header` (threads and load) is printed above each."""
    head = (f"{'workload':<10} {'backend':<22} {'median ms':>10} {'IQR ms':>8} {'n':>3} "
            f"{'GFLOP/s':>8} {'%peak':>6} {'t/t(np32)':>9} {'tokens/s':>9} {'peak MiB':>8} "
            f"{'check':>8}")
    out = []
    for c in configs:
        crow = [r for r in rows if r["config"] == c["name"]]
        if not crow:
            continue
        out.append("")
        out.append(c["description"] + (f"  [{c['note']}]" if c.get("note") else ""))
        if header:
            out.append(header)
        out.append(head)
        out.append("-" * len(head))
        for r in crow:
            if r["status"] != "ok":
                why = r.get("reason") or r.get("error") or ""
                out.append(f"{r['workload']:<10} {r['backend']:<22} {r['status']}: {why[:90]}")
                continue
            t = r["timing"]
            pf = r.get("peak_fraction")
            ratio = r.get("paired_time_vs_np_f32", r.get("time_vs_np_f32"))
            mem = (r.get("memory") or {}).get("peak_bytes")
            chk = r.get("check") or {}
            chk_s = f"{chk['rel']:.0e}" if "rel" in chk else ("err" if "error" in chk else "-")
            out.append(
                f"{r['workload']:<10} {r['backend']:<22} {_fmt_time(t['median']):>10} "
                f"{_fmt_time(t['iqr']):>8} {t['samples']:>3} {r['gflops']:>8.1f} "
                f"{'-' if pf is None else f'{100 * pf:.0f}%':>6} "
                f"{'-' if ratio is None else f'{ratio:.2f}':>9} {r['tokens_per_s']:>9.0f} "
                f"{_mib(mem):>8} {chk_s:>8}")
        spin = _spin_line(crow)
        if spin:
            out.append(spin)
        notes = sorted({f"{r['backend']} {r['note']}" for r in crow if r["status"] == "ok"
                        and r.get("note")})
        out.extend(f"how it ran: {n}" for n in notes)
        firsts = [f"{r['backend']} {r['workload']} {r['timing']['first_call']:.1f}s"
                  + (f" ({r['compile']['unique_graphs']} graphs, {r['compile']['graph_breaks']} graph "
                     f"breaks)" if r.get("compile") else "")
                  for r in crow if r["status"] == "ok" and "compile" in r["backend"]]
        if firsts:
            out.append("first call (torch.compile compiles there, not timed above): " + ", ".join(firsts))
    return "\n".join(out)


def _spin_line(rows: list[dict[str, Any]]) -> str | None:
    """Interleaved + isolated runs: how long each backend's helper threads kept spinning after its
    samples (the wait before the next backend's sample; one 10 ms check window means none)."""
    waits: dict[str, list[float]] = {}
    for r in rows:
        after = (r.get("settle") or {}).get("after_its_samples")
        if r["status"] == "ok" and after and after["waits"]:
            waits.setdefault(r["backend"], []).append(after["mean_s"])
    if not waits:
        return None
    return ("isolation: each sample waited for the previous backend's helper threads to go idle; "
            "mean wait after a sample of " + ", ".join(f"{b} {1e3 * sum(v) / len(v):.0f} ms"
                                                      for b, v in waits.items()))


def format_legend() -> str:
    return ("columns: median/IQR over n samples after warm-up; GFLOP/s = matmul FLOPs of the formula "
            "(benchmarks/flops.py) / median;\n  %peak = of the measured matmul peak of the same "
            "device and precision; t/t(np32) = median / np-f32's median (<1 faster; with --interleave the "
            "median of per-round ratios);\n  tokens/s = "
            "target tokens (generate: new tokens) per second; peak MiB = peak bytes allocated during "
            "one call above its start;\n  check = max |logits - npformer float64| / max |logits| on "
            "a slice, eval mode (same weights, same inputs)")


def write_json(doc: dict[str, Any], path: str) -> None:
    """The run's document at path, written whole or not at all (benchmarks.files)."""
    files.write_json(path, doc)


# -- plots ---------------------------------------------------------------------------------------------
def pyplot():
    """matplotlib.pyplot with a non-interactive backend, or None (with a note) when not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("plots skipped: matplotlib is not installed (pip install matplotlib)")
        return None


def plot_throughput(doc: dict[str, Any], path: str) -> str | None:
    """GFLOP/s per backend and workload, one panel per configuration, with the measured peak."""
    plt = pyplot()
    rows = [r for r in doc["results"] if r["status"] == "ok" and r["workload"] != "generate"]
    if plt is None or not rows:
        return None
    configs = [c["name"] for c in doc["configs"] if any(r["config"] == c["name"] for r in rows)]
    fig, axes = plt.subplots(1, len(configs), figsize=(5.5 * len(configs), 4.2), squeeze=False)
    for ax, cname in zip(axes[0], configs):
        cr = [r for r in rows if r["config"] == cname]
        workloads = [w for w in ("forward", "fwd_bwd", "train_step") if any(r["workload"] == w for r in cr)]
        backends = list(dict.fromkeys(r["backend"] for r in cr))
        width = 0.8 / max(len(backends), 1)
        for i, b in enumerate(backends):
            vals = [next((r["gflops"] for r in cr if r["backend"] == b and r["workload"] == w), 0.0)
                    for w in workloads]
            ax.bar([j + i * width for j in range(len(workloads))], vals, width, label=b)
        pk = doc["peak"]["peak"].get("cpu/float32")
        if pk:
            ax.axhline(pk["gflops"], color="k", ls="--", lw=1, label="fp32 matmul peak (CPU)")
        ax.set_xticks([j + width * (len(backends) - 1) / 2 for j in range(len(workloads))])
        ax.set_xticklabels(workloads)
        ax.set_title(cname)
        ax.set_ylabel("GFLOP/s (matmul FLOPs / median time), log scale")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    stamp_figure(fig, doc.get("plot_stamp") or _stamp(doc))
    files.save_figure(fig, path)
    plt.close(fig)
    return path


def _stamp(doc: dict[str, Any]) -> str:
    t, load = doc.get("threads", {}), doc.get("load")
    return (f"{doc.get('machine', {}).get('cpu')} | {t.get('requested')} thread(s) | "
            + (load["stamp"] if load else "load not measured"))


def stamp_figure(fig, stamp: str) -> None:
    """The run's threads, load and date along the bottom of a figure (red when the run was loaded)."""
    import textwrap

    text = textwrap.fill(stamp, width=max(40, int(fig.get_figwidth() * 16)))
    lines = text.count("\n") + 1
    fig.tight_layout(rect=(0, 0.035 * lines + 0.01, 1, 1))
    fig.text(0.005, 0.01, text, fontsize=7, ha="left", va="bottom",
             color="red" if "LOADED" in stamp or "MOVED" in stamp else "0.3")
