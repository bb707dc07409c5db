"""Where npformer's time goes: a per-function timer over npformer's own code, plus cProfile.

    python -m benchmarks.profiling --config base --workload train_step --steps 3

Per-function timer: every function defined in an `npformer.*` module (the `x_forward`/`x_backward`
pairs, validation checks, helpers) and every Module subclass's `forward`/`backward` is wrapped, in
place and only for the duration of the profile, by a timer that records its exclusive time (its own
time minus the time of wrapped functions it called). A matmul written as `x @ W.T` is not a function
call, so it is charged to the function whose line it is on (e.g. `linear_forward` is almost entirely
its matmul); the category column groups functions by what they mostly do. Overhead: about a
microsecond per wrapped call, negligible at the base configuration. cProfile's view (its own
overhead is larger) is printed after, by tottime.
"""
from __future__ import annotations

if __name__ == "__main__":  # fix thread counts before NumPy loads
    import sys as _sys

    from benchmarks.machine import pin_threads_from_argv

    pin_threads_from_argv(_sys.argv[1:])

import argparse
import cProfile
import functools
import inspect
import io
import pstats
import sys
import time
from collections import defaultdict
from typing import Any, Callable

CATEGORIES = (  # first match wins: (category, substrings of "module.function")
    ("matmul: linear", ("linear.linear_forward", "linear.linear_backward")),
    ("matmul+softmax: attention", ("attention.attention_weights", "attention.sdpa")),
    ("softmax / log-softmax", ("softmax.",)),
    ("layernorm", ("layernorm.",)),
    ("loss", ("loss.",)),
    ("dropout (mask draws, scaling)", ("dropout.",)),
    ("activation", ("activations.",)),
    ("embedding / positions", ("embedding.", "positional.")),
    ("optimizer (Adam)", ("optim.",)),
    ("input checks (validation)", ("validation.", ".check_", "gradcheck.")),
    ("masks", ("masks.", "target_self_mask")),
    ("heads split/merge, residuals, glue", ("",)),
)


def category(name: str) -> str:
    for cat, keys in CATEGORIES:
        if any(k in name for k in keys):
            return cat
    return CATEGORIES[-1][0]


class OpTimer:
    """Exclusive wall time per wrapped function, with a stack to subtract callees."""

    def __init__(self) -> None:
        self.exclusive: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[float] = []               # children's inclusive time, per open frame
        self._undo: list[Callable[[], None]] = []

    def wrap(self, name: str, fn: Callable) -> Callable:
        clock = time.perf_counter

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            self._stack.append(0.0)
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                total = clock() - t0
                children = self._stack.pop()
                self.exclusive[name] += total - children
                self.calls[name] += 1
                if self._stack:
                    self._stack[-1] += total

        timed.__wrapped_by_optimer__ = True  # type: ignore[attr-defined]
        return timed

    def install(self, prefix: str = "npformer") -> None:
        """Wrap every function of `prefix.*` modules (in every module's globals that names it) and
        every forward/backward method of classes defined there."""
        mods = {n: m for n, m in sys.modules.items() if n == prefix or n.startswith(prefix + ".")}
        wrapped: dict[int, Callable] = {}
        for mname, mod in mods.items():
            for attr, obj in list(vars(mod).items()):
                if inspect.isfunction(obj) and obj.__module__ == mname:
                    wrapped[id(obj)] = self.wrap(f"{mname.split('.', 1)[-1]}.{attr}", obj)
                elif inspect.isclass(obj) and obj.__module__ == mname:
                    for meth in ("forward", "backward", "step", "_update", "zero_grad"):
                        f = obj.__dict__.get(meth)
                        if inspect.isfunction(f):
                            w = self.wrap(f"{mname.split('.', 1)[-1]}.{obj.__name__}.{meth}", f)
                            setattr(obj, meth, w)
                            self._undo.append(functools.partial(setattr, obj, meth, f))
        for mod in mods.values():                    # rebind every reference, imported ones too
            for attr, obj in list(vars(mod).items()):
                if inspect.isfunction(obj) and id(obj) in wrapped:
                    setattr(mod, attr, wrapped[id(obj)])
                    self._undo.append(functools.partial(setattr, mod, attr, obj))

    def uninstall(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def table(self, total: float, top: int = 25) -> list[dict[str, Any]]:
        rows = sorted(self.exclusive.items(), key=lambda kv: -kv[1])
        return [{"function": n, "calls": self.calls[n], "seconds": s, "share": s / total,
                 "category": category(n)} for n, s in rows[:top]]

    def by_category(self, total: float) -> list[dict[str, Any]]:
        acc: dict[str, float] = defaultdict(float)
        for n, s in self.exclusive.items():
            acc[category(n)] += s
        acc["outside npformer (benchmark loop)"] = max(total - sum(self.exclusive.values()), 0.0)
        return [{"category": c, "seconds": s, "share": s / total}
                for c, s in sorted(acc.items(), key=lambda kv: -kv[1])]


def profile_workload(config: str = "base", workload: str = "train_step", backend: str = "np-f32",
                     steps: int = 3, threads: int | None = None, with_cprofile: bool = True
                     ) -> dict[str, Any]:
    from benchmarks.backends import get_backend, make_inputs, make_session, master_weights
    from benchmarks.configs import get_config
    from benchmarks.flops import step_flops
    from benchmarks.machine import apply_threads, chosen_threads

    threads = threads or chosen_threads()
    apply_threads(threads)
    bc = get_config(config)
    b = get_backend(backend)
    if b.family != "numpy":
        raise ValueError(f"--backend: expected an npformer backend (np-f32, np-f64), got {backend!r}")
    tcfg = bc.transformer_config(b.dtype)
    s = make_session(bc, b, master_weights(bc), make_inputs(bc, tcfg), threads)
    fn = s.fn(workload)
    fn()                                                          # warm-up
    t0 = time.perf_counter()
    for _ in range(steps):
        fn()
    plain = (time.perf_counter() - t0) / steps
    timer = OpTimer()
    timer.install()
    try:
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        timed_total = time.perf_counter() - t0
    finally:
        timer.uninstall()
    out: dict[str, Any] = {
        "config": config, "workload": workload, "backend": backend, "steps": steps,
        "threads": threads, "seconds_per_step_plain": plain,
        "seconds_per_step_timed": timed_total / steps,
        "by_category": timer.by_category(timed_total), "by_function": timer.table(timed_total),
    }
    if workload != "generate":
        out["flops_per_step"] = step_flops(tcfg, bc.model, workload, bc.batch, bc.src_len, bc.tgt_len)
    if with_cprofile:
        prof = cProfile.Profile()
        prof.enable()
        fn()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        out["cprofile_top"] = buf.getvalue()
    s.close()
    return out


def format_profile(p: dict[str, Any]) -> str:
    lines = [f"profile: {p['backend']} {p['config']} {p['workload']}, {p['steps']} steps, "
             f"{p['threads']} threads: {p['seconds_per_step_plain'] * 1e3:.1f} ms/step plain, "
             f"{p['seconds_per_step_timed'] * 1e3:.1f} ms/step with the per-function timer"]
    if "flops_per_step" in p:
        lines.append(f"matmul FLOPs per step {p['flops_per_step'] / 1e9:.1f} G -> "
                     f"{p['flops_per_step'] / p['seconds_per_step_plain'] / 1e9:.1f} GFLOP/s")
    lines.append("\nby category (exclusive time):")
    for r in p["by_category"]:
        lines.append(f"  {r['category']:<40} {r['seconds'] / p['steps'] * 1e3:9.1f} ms/step "
                     f"{100 * r['share']:5.1f}%")
    lines.append("\nby function (exclusive time, top 25):")
    for r in p["by_function"]:
        lines.append(f"  {r['function']:<48} {r['calls'] // p['steps']:6d} calls/step "
                     f"{r['seconds'] / p['steps'] * 1e3:9.1f} ms/step {100 * r['share']:5.1f}%")
    if p.get("cprofile_top"):
        lines.append("\ncProfile, one step, by tottime:")
        lines.append(p["cprofile_top"])
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.profiling", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="base")
    ap.add_argument("--workload", default="train_step",
                    choices=("forward", "fwd_bwd", "train_step", "generate"))
    ap.add_argument("--backend", default="np-f32", choices=("np-f32", "np-f64"))
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--no-cprofile", action="store_true")
    ap.add_argument("--json", default=None, help="also write the result here")
    a = ap.parse_args(argv)
    p = profile_workload(a.config, a.workload, a.backend, a.steps, a.threads, not a.no_cprofile)
    print(format_profile(p))
    if a.json:
        from benchmarks.report import write_json
        write_json(p, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
