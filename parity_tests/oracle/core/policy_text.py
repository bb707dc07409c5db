"""The report's lines about isolation and the source scan: how the worker was confined
(`confinement_text`) and what the parent's static scan of the submission found (`policy_lines`)."""
from __future__ import annotations

from .verdicts import CheckResult


def confinement_text(c: dict) -> str:
    """One line: what the kernel confined the worker with (docs/ORACLE.md, threat model)."""
    parts = ["own user/mount/PID/network namespaces" if c.get("namespaces") else
             "no namespaces" + (f" ({c['namespaces_reason'][:80]})" if c.get("namespaces_reason")
                                else "")]
    if c.get("view"):
        parts.append("private view (only the system, the interpreter, the harness files and the "
                     "submission's folder; own /proc; no host sockets)")
    elif c.get("read_allow_list"):
        parts.append("NO private view, but Landlock lets it read only the listed paths (host "
                     "unix sockets it knows the path of stay reachable)"
                     + (f" ({str(c['view_reason'])[:80]})" if c.get("view_reason") else ""))
    else:
        parts.append("NO private view: it can read what the oracle's user can outside the "
                     "Landlock-hidden folders" + (f" ({str(c['view_reason'])[:80]})"
                                                  if c.get("view_reason") else ""))
    if c.get("landlock"):
        what = (["writes only in its scratch folder" + (
            " and a throwaway copy of its own folder" if c.get("writable_copy") else "")]
            if c.get("writes_only_in") else [])
        what += ["no TCP"] if c.get("network_tcp_denied") else []
        what += ["signals scoped"] if c.get("signals_scoped") else []
        what += ["the reference unreadable"] if c.get("unreadable") else []
        parts.append(f"Landlock ABI {c['landlock']} (" + ", ".join(what) + ")")
    else:
        parts.append("no Landlock" + (f" ({str(c.get('reason'))[:80]})" if c.get("reason") else ""))
    if c.get("pids_max") or c.get("rlimit_nproc"):
        parts.append(f"at most {c.get('pids_max') or c.get('rlimit_nproc')} processes")
    if c.get("scratch_mb"):
        parts.append(f"scratch tmpfs {c['scratch_mb']} MiB")
    return "; ".join(parts)


def policy_lines(res: CheckResult) -> list[str]:
    p = res.policy or {}
    if not p:
        return []
    conf = p.get("confinement") if isinstance(p.get("confinement"), dict) else None
    if p.get("isolated") and conf is not None and conf.get("not_started"):
        L = ["  isolation: none needed: no worker process was started, nothing of the candidate ran"]
    else:
        where = "a worker process of its own" if p.get("isolated") else \
            "NOT isolated (a Python object, run in this process)"
        L = [f"  isolation: {where}; {p.get('runs_per_example', 1)} call(s) per example"]
        if p.get("isolated") and conf is not None:
            L.append("  confinement: " + confinement_text(conf))
    if p.get("imports_declared"):
        L.append("  imports (source): " + ", ".join(p["imports_declared"]))
    if p.get("notable_calls"):
        L.append("  library calls that may do the work: " + ", ".join(p["notable_calls"]))
    if p.get("violations"):
        L.append("  forbidden imports: " + ", ".join(p["violations"]))
    if p.get("names_internals"):
        L.append("  NAMES THE ORACLE'S OWN MODULES in its source (code written against the "
                 "grader: review it by hand): " + ", ".join(p["names_internals"]))
    if p.get("reaches_into"):
        L.append("  REACHES INTO ITS OWN INTERPRETER (the garbage collector's objects, frames, "
                 "patches of imported modules: how code beats the checks made beside it; review "
                 "it by hand): " + ", ".join(p["reaches_into"]))
    if p.get("watches"):
        L.append("  LOOKS AT WHAT RUNS IT (its module name, command line, environment, caller's "
                 "stack, loaded modules, working directory: code that can tell the grader's run "
                 "from its author's; review it by hand): " + ", ".join(p["watches"]))
    return L
