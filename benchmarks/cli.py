"""`python -m benchmarks`: npformer vs torchformer vs torch.nn, CPU and (when present) CUDA.

Quick look (under a minute on 2 cores; tiny and small configs, few repeats, short sweeps):
    python -m benchmarks --quick
Full run (every config incl. the paper's base model, torch.compile, longer sweeps; minutes):
    python -m benchmarks --out benchmark_results
Pick parts:
    python -m benchmarks --configs base --backends np-f32,tf-cpu,nn-cpu --workloads train_step
    python -m benchmarks --list
Output: the table on stdout, `OUT/results.json` (versions, hardware, thread counts, peaks, every
measurement with its samples' spread) and `OUT/*.png` (throughput, sequence-length and d_model sweeps).
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from typing import Any

from benchmarks.argtypes import csv_names, int_at_least, int_list, probability, seconds, thread_list, threads_arg
from benchmarks.machine import apply_threads, available_cores, chosen_threads, describe_machine, npformer_train_threads
from npformer.cli.errors import OneLineParser

# PyTorch without the CUDA packages a plain `pip install torch` pulls on Linux (README, Quick start)
TORCH_CPU = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def build_parser() -> argparse.ArgumentParser:
    from benchmarks.configs import CONFIGS, WORKLOADS

    p = OneLineParser(
        prog="python -m benchmarks", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n", 1)[1],
        epilog="configs: " + "; ".join(c.describe() for c in CONFIGS.values()))
    p.add_argument("--quick", action="store_true",
                   help="tiny+small configs, CPU backends without torch.compile, 3 repeats, short "
                        "sweeps: under a minute on 2 cores")
    p.add_argument("--configs", type=csv_names, default=None,
                   help=f"comma-separated, from {','.join(CONFIGS)} (default: all; --quick: tiny,small)")
    p.add_argument("--backends", type=csv_names, default=None,
                   help="comma-separated backend names (see --list; default: the CPU set, plus the "
                        "CUDA set when a GPU is present)")
    p.add_argument("--workloads", type=csv_names, default=None,
                   help=f"comma-separated, from {','.join(WORKLOADS)} (default: all)")
    p.add_argument("--out", default="benchmark_results",
                   help="directory for results.json and the PNG plots (default: %(default)s)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the files an earlier run left in --out (results.json, the plots, "
                        "the log); without it such a folder is refused before anything is measured")
    p.add_argument("--threads", type=threads_arg, default=None,
                   help=f"threads for BLAS/OpenMP/torch (default: what `npformer train` uses, "
                        f"{npformer_train_threads()}; {available_cores()} cores available here); "
                        f"set before NumPy/torch load")
    p.add_argument("--batch-size", type=int_at_least(1), default=None,
                   help="rows per step of forward/fwd_bwd/train_step, for every config (default: "
                        "each config's own; generation keeps its own batch)")
    p.add_argument("--seq-len", type=int_at_least(1), default=None,
                   help="tokens per row, for every config: source and target length of an "
                        "encoder-decoder, the context of a causal LM (default: each config's own; "
                        "at most the config's max_len)")
    p.add_argument("--dropout", type=probability, default=None,
                   help="dropout probability at every dropout site a config has, in [0, 1) "
                        "(default: each config's own, 0.1 for most)")
    p.add_argument("--repeats", type=int_at_least(1), default=None, help="timed samples per measurement "
                   "(default 10; --quick 3)")
    p.add_argument("--warmup", type=int_at_least(0), default=None, help="untimed calls first (default 2; --quick 1)")
    p.add_argument("--max-time", type=seconds, default=None,
                   help="seconds of samples per measurement at most (default 15; --quick 2)")
    p.add_argument("--interleave", action="store_true",
                   help="time all backends of a config in rounds (one sample each per round, "
                        "time.perf_counter for all) instead of one after another: ratios stay fair "
                        "when other processes load the machine; ratios become per-round medians")
    p.add_argument("--no-isolate", action="store_true",
                   help="do not wait before each sample until the previous backend's BLAS/OpenMP "
                        "helper threads stop spinning (benchmarks/isolation.py): only to show the "
                        "bias that wait removes")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory measurement")
    p.add_argument("--ignore-memory-check", action="store_true",
                   help="start even when a config's training step looks too big for this machine's "
                        "available memory (checked before measuring: benchmarks/memory_check.py)")
    p.add_argument("--no-check", action="store_true", help="skip the same-logits check")
    p.add_argument("--no-sweeps", action="store_true", help="skip the seq-length / d_model sweeps")
    p.add_argument("--no-plots", action="store_true", help="write no PNG")
    p.add_argument("--sweep-backends", type=csv_names, default=["np-f32", "tf-cpu"],
                   help="backends of the sweeps (default: np-f32,tf-cpu)")
    p.add_argument("--sweep-lengths", type=int_list, default=None,
                   help="sequence lengths of the sweep (default 16..512; --quick 16,64,256)")
    p.add_argument("--sweep-d-models", type=int_list, default=None,
                   help="d_model values of the sweep (default 64,128,256,512; --quick 64,256)")
    p.add_argument("--peak-sizes", type=int_list, default=None,
                   help="square matmul sizes of the peak measurement (default 512,1024,2048; "
                        "--quick 1024)")
    p.add_argument("--scaling", action="store_true",
                   help="thread-scaling table instead (benchmarks/scaling.py): npformer plain and "
                        "data-parallel vs torchformer at 1, 2 and all cores; writes OUT/scaling.json")
    p.add_argument("--scaling-threads", type=thread_list, default=None,
                   help="thread counts of --scaling (default: 1,2,all cores)")
    p.add_argument("--list", action="store_true", help="list configs, backends and workloads")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def _list() -> str:
    from benchmarks.backends import BACKENDS
    from benchmarks.configs import CONFIGS, WORKLOAD_HELP

    lines = ["configs:"] + [f"  {c.describe()}  {c.note}" for c in CONFIGS.values()]
    lines += ["backends:"] + [f"  {b.name:<24} {b.impl} {b.device} {b.precision}"
                              + (" compile" if b.compile else "")
                              + (" explicit-attention" if b.attention == "explicit" else "")
                              + (f"  ({b.note})" if b.note else "")
                              for b in BACKENDS.values()]
    lines += ["workloads:"] + [f"  {k:<11} {v}" for k, v in WORKLOAD_HELP.items()]
    return "\n".join(lines)


def _torch_installed() -> bool:
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def _cuda_available() -> bool:
    try:
        import torch
        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def _skip_torch_backends(lists: dict[str, tuple[list[str], bool]]) -> dict[str, list[str]]:
    """{option: names} without the torch backends when torch is not installed, and one line saying
    which were skipped; an option given explicitly that asks for one is an error instead.
    `lists`: {option: (names, given explicitly)}."""
    from benchmarks.backends import get_backend
    out = {k: names for k, (names, _) in lists.items()}
    if _torch_installed():
        return out
    skipped: list[str] = []
    for option, (names, explicit) in lists.items():
        torch_ones = [b for b in names if get_backend(b).family != "numpy"]
        if torch_ones and explicit:
            raise ValueError(f"{option}: {','.join(torch_ones)} need PyTorch, which is not "
                             f"installed (the CPU-only build: {TORCH_CPU})")
        skipped += [b for b in torch_ones if b not in skipped]
        out[option] = [b for b in names if b not in torch_ones]
    if skipped:
        print(f"torch is not installed: skipping the torch backends {','.join(skipped)} "
              f"(to include them, the CPU-only build: {TORCH_CPU})", flush=True)
    return out


def _written_files(args) -> list[str]:
    """The files a run with these options writes into --out."""
    names = ["results.json", "third_party_output.log"]
    if not args.no_plots:
        names.append("throughput.png")
        if not args.no_sweeps:
            names += ["sweep_seq_len.png", "sweep_d_model.png"]
    return names


def _overrides(args) -> dict[str, Any]:
    return {k: getattr(args, k) for k in ("batch_size", "seq_len", "dropout")
            if getattr(args, k) is not None}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from benchmarks.stopped import removed_if_stopped, stopped_line
    from npformer.cli.option_rules import sigterm_as_interrupt

    names = ["scaling.json"] if args.scaling else _written_files(args)
    try:
        with sigterm_as_interrupt(), removed_if_stopped(args.out, [] if args.list else names):
            return _run(args, argv)
    except (KeyboardInterrupt, OSError, MemoryError) as e:   # one line, never a traceback
        line, code = stopped_line(e)
        print(f"python -m benchmarks: {line}", file=sys.stderr)
        return code


def _run(args: argparse.Namespace, argv: list[str] | None) -> int:
    if args.list:
        print(_list())
        return 0
    if args.scaling:
        if _overrides(args):
            print("python -m benchmarks: error: --batch-size/--seq-len/--dropout: not supported "
                  "with --scaling (its configurations are listed in benchmarks/scaling.py)",
                  file=sys.stderr)
            return 2
        from benchmarks.scaling import main as scaling_main
        return scaling_main(args)
    from benchmarks.backends import default_backends, get_backend
    from benchmarks.configs import DEFAULT_CONFIGS, QUICK_CONFIGS, WORKLOADS, resolve_config
    from benchmarks.flops import __doc__ as flop_doc
    from benchmarks.goals import caveats, evaluate_goals, format_goals
    from benchmarks.load import LoadMeter, sample, summarize
    from benchmarks.output import count_lines, quarantine
    from benchmarks.peak import combine_peaks, measure_peaks
    from benchmarks.report import format_legend, format_machine, format_table, plot_throughput, write_json
    from benchmarks.run import SCHEMA, Options, add_peak_fractions, run_benchmark, workload_docs

    threads = args.threads if args.threads else chosen_threads()
    t_start = time.perf_counter()
    thread_info = apply_threads(threads)
    thread_info["default"] = npformer_train_threads()
    thread_info["source"] = "--threads" if args.threads else "npformer train's default"
    cuda = _cuda_available()
    configs = args.configs or list(QUICK_CONFIGS if args.quick else DEFAULT_CONFIGS)
    backends = args.backends or default_backends(args.quick, cuda)
    workloads = args.workloads or list(WORKLOADS)
    overrides = _overrides(args)
    try:
        from npformer.io.files import check_output_dir
        check_output_dir(args.out, "--out", writes=_written_files(args),     # before measuring
                         overwrite=args.overwrite)
        for b in backends + args.sweep_backends:
            get_backend(b)
        given = argv if argv is not None else sys.argv[1:]
        kept = _skip_torch_backends({
            "--backends": (backends, args.backends is not None),
            "--sweep-backends": ([] if args.no_sweeps else args.sweep_backends,
                                 any(a.startswith("--sweep-backends") for a in given))})
        backends = kept["--backends"]
        if not args.no_sweeps:
            args.sweep_backends = kept["--sweep-backends"]
        resolved = [resolve_config(c, **overrides) for c in configs]
        if not args.ignore_memory_check:                # before any input is built or timed
            from benchmarks.memory_check import check_configs_fit
            check_configs_fit(resolved, [get_backend(b) for b in backends])
        for b in backends:
            if get_backend(b).cuda and not cuda:
                raise ValueError(f"--backends: {b} needs CUDA, and torch sees no GPU here")
        for w in workloads:
            if w not in WORKLOADS:
                raise ValueError(f"--workloads: expected names from {list(WORKLOADS)}, got {w!r}")
        for b in args.sweep_backends:
            get_backend(b)
        for d in args.sweep_d_models or []:               # heads = max(2, d // 32) (sweeps.py)
            if d % max(2, d // 32):
                raise ValueError(f"--sweep-d-models: expected multiples of their head count "
                                 f"max(2, d // 32), got {d} ({max(2, d // 32)} heads)")
    except ValueError as e:
        print(f"python -m benchmarks: error: {e}", file=sys.stderr)
        return 2
    opts = Options(configs=configs, backends=backends, workloads=workloads, threads=threads,
                   warmup=args.warmup if args.warmup is not None else (1 if args.quick else 2),
                   repeats=args.repeats if args.repeats is not None else (3 if args.quick else 10),
                   max_time=args.max_time if args.max_time is not None else (2.0 if args.quick else 15.0),
                   memory=not args.no_memory, check=not args.no_check, quick=args.quick,
                   sweeps=not args.no_sweeps, sweep_backends=args.sweep_backends,
                   interleave=args.interleave, isolate=not args.no_isolate, overrides=overrides,
                   verbose=not args.quiet)
    os.makedirs(args.out, exist_ok=True)
    third_party = os.path.join(args.out, "third_party_output.log")
    machine = describe_machine()
    load_before = sample()
    meter = LoadMeter()
    with quarantine(third_party, quiet=args.quiet) as log:
        opts.log = log
        log(f"threads fixed at {threads} ({thread_info['source']}); {load_before['load_average_1min']}"
            f" load average, other processes {load_before['other_processes_cores']} cores; "
            f"measuring matmul peak ...")
        has_torch = machine.get("torch") is not None
        peaks = measure_peaks(threads, quick=args.quick, with_torch=has_torch, with_cuda=cuda,
                              sizes=args.peak_sizes)
        rows = run_benchmark(opts, peaks, cuda)
        sweeps = None
        if opts.sweeps:
            sweeps = __import__("benchmarks.sweeps", fromlist=["run_sweeps"]).run_sweeps(
                opts.sweep_backends, threads, args.quick, log=log, memory=opts.memory,
                lengths=args.sweep_lengths, d_models=args.sweep_d_models)
        log("measuring matmul peak again ...")
        peaks = combine_peaks(peaks, measure_peaks(threads, quick=args.quick, with_torch=has_torch,
                                                   with_cuda=cuda, sizes=args.peak_sizes))
        during = meter.others()
        load = summarize(load_before, during, sample())
        add_peak_fractions(rows, peaks["peak"])
        goals = evaluate_goals(rows, threads, configs)
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:]),
            "options": opts.to_dict(),
            "machine": machine,
            "threads": thread_info,
            "load": load,
            "peak": peaks,
            "configs": [bc.to_dict() for bc in resolved],
            "backends": [get_backend(b).to_dict() for b in backends],
            "workloads": workload_docs(),
            "flop_formula": flop_doc,
            "results": rows,
            "goals": goals,
            "goal_caveats": caveats(args.interleave, overrides, load["loaded"]),
            "sweeps": sweeps,
            "notes": [
                "timings share the machine with whatever else runs on it; compare backends within "
                "one run",
                "memory methods differ by backend family (benchmarks/memory.py); same definition",
            ],
        }
        if load["loaded"]:
            doc["notes"].append(f"WARNING: {load['stamp']}: other processes competed for the CPU, so "
                                f"absolute timings (multi-threaded ones most) are unreliable; rerun "
                                f"on an idle machine")
        json_path = os.path.join(args.out, "results.json")
        plots: list[str] = []
        doc["plot_stamp"] = plot_stamp(doc)
        if not args.no_plots:
            p = plot_throughput(doc, os.path.join(args.out, "throughput.png"))
            plots += [p] if p else []
            if sweeps:
                from benchmarks.sweeps import plot_sweeps
                pk = peaks["peak"].get("cpu/float32", {}).get("gflops")
                plots += plot_sweeps(sweeps, pk, args.out, stamp=doc["plot_stamp"])
    doc["plots"] = plots
    doc["third_party_output"] = {"path": third_party, "lines": count_lines(third_party)}
    doc["seconds"] = time.perf_counter() - t_start
    write_json(doc, json_path)

    print(format_machine(doc))
    print(format_table(rows, doc["configs"], header=table_stamp(doc)))
    print()
    print(format_legend())
    print()
    print(format_goals(doc["goals"], doc["goal_caveats"], loaded=doc["load"]["loaded"]))
    for note in doc["notes"]:
        if note.startswith("WARNING"):
            print("\n" + note)
    n_third = doc["third_party_output"]["lines"]
    if n_third:
        print(f"\n{n_third} line(s) printed by libraries during the run kept out of this table: "
              f"{third_party}")
    print(f"\nwrote {json_path}" + (f" and {', '.join(plots)}" if plots else "")
          + f" in {doc['seconds']:.0f}s")
    return 0


def table_stamp(doc: dict[str, Any]) -> str:
    """The line above every table: threads (and how to change them) and the machine's load."""
    t = doc["threads"]
    how = ("set by --threads" if t.get("source") == "--threads"
           else "npformer train's default; change with --threads N")
    return f"{t['requested']} thread(s) ({how}) | {doc['load']['stamp']}"


def plot_stamp(doc: dict[str, Any]) -> str:
    return f"{doc['machine'].get('cpu')} | {table_stamp(doc)}"
