"""The worker process of one submission: `python -I -B -c BOOT ROOT` (parent.py), or a fork of the
fork server, itself such an interpreter (zygote.py, which calls main() once the fork is confined).

At start it moves the protocol onto private file descriptors and points fds 0/1/2 at /dev/null
(stdin) and the parent's log (stdout/stderr), so nothing the submission prints can break a message.
Then it answers requests until the pipe closes:

    {"op": "prepare", "component", "options", "spec", "search_path", "import_path", "forbidden"}
        -> {"status": "ok", "caps", "notes", "kind", "framework"} | {"status": "failed", "verdict", ...}
    {"op": "run", "case", "runs", "modes"} + the case's arrays
        -> {"op": "tick"} after each stage (construct, each call, each mode), then
           {"status": "ok", "mapping", "absent", "dtypes", "missing", ...} + "value:KEY" /
           "againN:KEY" / "MODE:KEY" float64 arrays | {"status": "failed", ...}
    {"op": "infer", "case", "absent"} + the case's arrays (torch, once the runs with autograd are over)
        -> {"status": "ok"} + "inference:KEY" arrays | {"status": "failed", ...}
    every reply also carries "imports" (top-level modules new since the harness loaded) and
    "violations" (forbidden imports the audit hook refused).

Before any request (so before a line of the submission runs) it confines itself (confine.py):
Landlock lets it write only in its scratch directory, refuses TCP and signals outside the worker, and
RLIMIT_NPROC bounds its processes when it has a user namespace of its own; its first message,
{"op": "hello", "confinement": {...}}, says what was applied. At "prepare" the reference is taken out
of its memory (policy.scrub) and, with a second Landlock layer, made unreadable on disk.

Run as PID 1 of its own PID namespace (`unshare --pid --fork`, or namespaces.py), it forks
first: PID 1 only waits (and reaps), the worker is its child, so signals the submission sends itself
behave as anywhere else, and when PID 1 is killed the kernel kills everything left in the namespace.

Before the submission loads it makes the submission's own modules run from their source, never from
bytecode beside it (sources.py), and snapshots the library functions and the harness (tamper.py); every
reply is checked against that snapshot first, and a change makes it a failure naming what changed.
Global RNG states are reseeded unpredictably before every call (session._fresh_rng). This process
decides nothing: the parent validates every field and array of every reply.
"""
from __future__ import annotations

import os
import sys

SCRATCH_MB = 256        # the scratch folder's tmpfs, where the worker has a mount namespace
MAX_PROCESSES = 256     # RLIMIT_NPROC inside the worker's own user namespace (threads count too)
PRELOADED: frozenset = frozenset()  # modules a fork server imported that a fresh worker lacks (torch)
WRITABLE_COPIES: list[str] = []     # the submission's folders copied writable into the view


def _init() -> None:
    """PID 1 of the worker's namespace: fork the worker, reap everything, exit as the worker did."""
    pid = os.fork()
    if pid == 0:
        return
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)                                     # the pipes belong to the worker alone
    while True:
        try:
            done, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if done == pid:
            os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def _named_package(spec: str) -> str:
    """The top-level package of a `package.module:Name` candidate. When that is a forbidden one
    (this project's torchformer twin, checked on purpose), the harness imports it and it imports
    npformer: nothing is scrubbed or made unreadable then (it is not a submission)."""
    loc = spec.rpartition(":")[0]
    if not loc or loc.endswith(".py") or os.sep in loc or "/" in loc:
        return ""
    return loc.split(".")[0]


def _others(header: dict, root: str) -> list[str]:
    """Folders the parent asked to make unreadable (other students' submissions), never one that
    holds what this worker needs (its submission, its scratch, the harness, Python)."""
    spec = str(header.get("spec", ""))
    mine = os.path.dirname(spec.rpartition(":")[0]) if ":" in spec else ""
    keep = [os.path.realpath(k) for k in (mine, os.getcwd(), os.path.join(root, "parity_tests"),
                                          sys.prefix, sys.base_prefix) if k]
    out = []
    for d in header.get("deny_read", []) or []:
        if isinstance(d, str) and os.path.isdir(d):
            d = os.path.realpath(d)
            if not any(k == d or k.startswith(d + os.sep) for k in keep):
                out.append(d)
    return out


def _keep(header: dict, root: str, here: str, forbid: list) -> list[str]:
    """What the worker's view holds: the system and the interpreter, the harness files, the
    submission's folder (or its package), the adapter file, the project packages not forbidden."""
    from .view import SYSTEM, python_paths
    spec = str(header.get("spec", ""))
    loc = spec.rpartition(":")[0]
    keep = list(SYSTEM) + python_paths(exclude=(root,) + tuple(
        p for p in header.get("search_path", []) if isinstance(p, str)))
    keep += [os.path.join(root, "parity_tests", "__init__.py"), here]
    for pkg in ("npformer", "torchformer", os.path.join("parity_tests", "harness")):
        dotted = pkg.replace(os.sep, ".")
        if not any(dotted == f or dotted.startswith(str(f) + ".") for f in forbid):
            keep.append(os.path.join(root, pkg))
    if loc.endswith(".py") or os.sep in loc or "/" in loc:
        keep.append(os.path.dirname(os.path.abspath(loc.split(",")[0])))
        from ..reading.package_import import anchor_folder
        anchor = anchor_folder(loc.split(",")[0], (header.get("options") or {}).get("package_root"))
        if anchor is not None:
            keep.append(anchor)
    elif loc:
        import importlib.util
        try:                                      # a top-level name: nothing is executed
            found = importlib.util.find_spec(loc.split(".")[0])
        except (ImportError, ValueError):
            found = None
        if found is not None:
            keep += list(found.submodule_search_locations or []) or \
                ([found.origin] if found.origin else [])
    adapter = (header.get("options") or {}).get("adapter_path")
    if isinstance(adapter, str) and adapter:
        keep.append(os.path.abspath(adapter))      # the file alone, not the spec's folder
    return keep


def _writable(header: dict, root: str) -> tuple:
    """The submission's own folders (its file's, the one its relative imports reach, a folder on
    the oracle's PYTHONPATH holding it), which the view copies writable (writable_copy.py); never
    one at, above or inside the project, the interpreter's trees, the worker's scratch folder (a
    submission kept in /tmp itself), the home folder or the file system's root."""
    loc = str(header.get("spec", "")).rpartition(":")[0].split(",")[0]
    if not (loc.endswith(".py") or os.sep in loc or "/" in loc):
        return ()
    from ..reading.package_import import anchor_folder
    where = os.path.abspath(loc)
    folders = [os.path.dirname(where),
               anchor_folder(loc, (header.get("options") or {}).get("package_root"))]
    folders += [p for p in header.get("import_path", []) or [] if isinstance(p, str) and p and
                where.startswith(os.path.abspath(p).rstrip(os.sep) + os.sep)]  # its import root
    guarded = {os.path.realpath(p) for p in (root, sys.prefix, sys.base_prefix, sys.exec_prefix,
                                             os.getcwd()) if p}     # cwd: the worker's scratch
    home = os.path.realpath(os.path.expanduser("~"))

    def inside(a: str, b: str) -> bool:         # a at or inside b
        return a == b or a.startswith(b.rstrip(os.sep) + os.sep)
    return tuple(f for f in {os.path.realpath(f) for f in folders if f}
                 if f != os.sep and not inside(home, f)
                 and not any(inside(f, g) or inside(g, f) for g in guarded))


def _confine(header: dict, root: str, here: str, forbid: list) -> dict:
    """Before the submission loads: the private view (or a tmpfs scratch folder), then Landlock
    (which forbids mounting, so it comes last). Returns what was applied, for the report."""
    from . import confine
    from .view import private_view
    conf: dict = {"view": False, "view_reason": "no mount namespace of its own"}
    if confine.own_user_namespace():
        hide = (root,) + tuple(p for p in header.get("search_path", []) if isinstance(p, str))
        conf = private_view(_keep(header, root, here, forbid), os.getcwd(), SCRATCH_MB, hide,
                            writable=_writable(header, root))
    if conf.get("view"):
        conf["scratch_mb"] = SCRATCH_MB
        conf["private_proc"] = True
    else:
        conf["scratch_mb"] = SCRATCH_MB if confine.private_scratch(os.getcwd(), SCRATCH_MB) \
            else None
    copies = conf.pop("writable", None) or []
    conf.update(confine.landlock(write_dirs=[os.getcwd()] + copies))
    conf["writable_copy"] = bool(copies)
    WRITABLE_COPIES[:] = copies
    conf.pop("kept", None)
    return conf


def _read_only_listed(conf: dict, header: dict, root: str, here: str, forbid: list) -> None:
    """No view: a last Landlock layer lets the worker read only the same listed paths, /dev, and
    of /proc its own process's folder and the machine's cpuinfo/meminfo/stat (no other process's
    command line). Last, because the layer that hides the forbidden packages lists their parent
    folders, which this one makes unreadable."""
    from . import confine
    if not conf.get("view") and conf.get("landlock"):
        keep = _keep(header, root, here, forbid) + ["/proc/self", "/proc/cpuinfo", "/proc/meminfo",
                                                    "/proc/stat", "/dev", os.getcwd()]
        conf.update(confine.landlock(read_only=keep))


class _Checker:
    """The harness-integrity check (tamper.replaced), held from before the submission loads: its
    function and code objects as they were then, so a submission replacing the check itself (or a
    helper of it) in the tamper module is seen by identity, without calling anything it made."""

    def __init__(self, tamper):
        self.mod, self.watch = tamper, tamper.snapshot()
        self.funcs = {n: f for n, f in vars(tamper).items() if callable(f) and
                      getattr(f, "__module__", None) == tamper.__name__}
        self.codes = {n: getattr(f, "__code__", None) for n, f in self.funcs.items()}
        self.check, self.failure = tamper.replaced, tamper.failure

    def forged(self) -> list[str]:
        now = vars(self.mod)
        bad = [f"{self.mod.__name__}.{n}" for n, f in self.funcs.items()
               if now.get(n) is not f or getattr(f, "__code__", None) is not self.codes[n]]
        return bad or self.check(self.watch)


def main() -> None:
    from .plain import show_plain
    show_plain()            # before the fork (PID 1 shows it too) and before Landlock
    if os.getpid() == 1:
        _init()
    proto_in, proto_out = os.dup(0), os.dup(1)          # non-inheritable copies
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)                                        # prints go to the parent's log
    os.close(null)

    from . import confine, policy, sources, tamper
    from .protocol import Reader, encode, write_all
    from .session import SUBMISSION_DIRS, Session, _jsonable

    info = {"own_namespaces": confine.own_user_namespace(),
            "rlimit_nproc": MAX_PROCESSES if confine.cap_processes(MAX_PROCESSES) else None}
    write_all(proto_out, encode({"op": "hello", "confinement": _jsonable(info)}))

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))      # .../parity_tests/oracle
    root = os.path.dirname(os.path.dirname(here))
    baseline = set(sys.modules) - PRELOADED
    reader = Reader(proto_in)
    session = None

    checker = None

    def reply(header: dict, arrays: dict | None = None) -> None:
        if checker is not None:
            forged = checker.forged()
            if forged:                      # the last word before a reply leaves: no array of it
                header, arrays = {**checker.failure(forged), "status": "failed"}, None
        new = sorted({m.split(".", 1)[0] for m in set(sys.modules) - baseline
                      if not m.startswith("_oracle_candidate_")} - {"__main__"})
        header = dict(header, imports=new[:200], violations=list(policy.STATE["violations"])[:50])
        write_all(proto_out, encode(_jsonable(header), arrays))

    while True:
        try:
            header, arrays = reader.read()
        except Exception:  # noqa: BLE001 - the parent closed the pipe (or sent garbage): stop
            os._exit(0)
        op = header.get("op")
        if op == "prepare":
            for p in header.get("search_path", []):     # only for a `package.module:Name` spec
                if isinstance(p, str) and p not in sys.path:
                    sys.path.append(p)
            for p in header.get("import_path", []):     # the oracle's PYTHONPATH, project excluded;
                if isinstance(p, str) and p not in sys.path:    # kept in the view with sys.path
                    sys.path.append(p)
            from ..reading.package_import import IMPORT_ROOTS
            IMPORT_ROOTS[:] = [p for p in header.get("import_path", []) if isinstance(p, str)]  # `from ..x`
            named = _named_package(str(header.get("spec", "")))
            forbid = list(header.get("forbidden", ()))
            if named and any(str(f).split(".")[0] == named for f in forbid):
                forbid = []     # a package of this project checked by name: its imports are ours
            conf = _confine(header, root, here, forbid)
            policy.install(header.get("forbidden", ()),
                           harness_dirs=(here + os.sep,),
                           package_dirs=tuple(os.path.join(root, d) + os.sep for d in
                                              ("npformer", "torchformer",
                                               os.path.join("parity_tests", "harness"))))
            hidden = policy.scrub(forbid, root) + _others(header, root)
            read = confine.landlock(deny_read=hidden, network=False, scope=False) if hidden else {}
            conf.update(unreadable=read.get("unreadable", []) if read.get("landlock") else [],
                        reference_in_memory=policy.reference_left(forbid))
            _read_only_listed(conf, header, root, here, forbid)
            # said before the submission is loaded, so the parent may believe it
            write_all(proto_out, encode({"op": "tick", "confinement": _jsonable(conf)}))
            baseline = set(sys.modules) - PRELOADED
            session = Session(header["component"], header["options"], spec=header["spec"])
            sources.install(SUBMISSION_DIRS, frozen=WRITABLE_COPIES)  # the source scanned
            checker = _Checker(tamper)      # libraries and harness, before the submission loads
            reply(session.prepare())
        elif op == "run" and session is not None and session.adapter is not None:
            h, out = session.run(header, arrays, runs=int(header.get("runs", 2)),
                                 tick=lambda: write_all(proto_out, encode({"op": "tick"})),
                                 modes=tuple(str(m) for m in header.get("modes") or ()))
            reply(h, out)
        elif op == "infer" and session is not None and session.adapter is not None:
            reply(*session.infer(header, arrays,
                                 tick=lambda: write_all(proto_out, encode({"op": "tick"}))))
        else:
            reply({"status": "failed", "verdict": "oracle_error",
                   "message": f"worker: unexpected request {str(op)[:40]!r}"})
            os._exit(0)


if __name__ == "__main__":
    main()
