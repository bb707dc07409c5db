"""How the parent talks to a submission: in its own worker process (the default) or, for a Python
object handed to `check(...)`, in this process. Both paths exchange the same encoded messages
(sandbox/protocol.py) and every reply is validated here before the runner looks at it: known
fields only, strings bounded, arrays float64 under known names, verdicts only failing ones.

    be = SandboxBackend(spec, component, opts, policy)    # or InProcessBackend(obj, backward, ...)
    prep = be.prepare()          # Prepared(caps, notes, kind, framework) or an Outcome (failure)
    rep = be.run(case, runs=2)   # Reply(values, again, mapping, absent, ...) or an Outcome
    be.close()                   # the worker and everything it started are gone
"""
from __future__ import annotations

import os
import secrets
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..components import Case, Component
from ..reading.calls import Raised, TimedOut, run_limited
from ..reading.findings import MAX_FIXED_MATRIX, Findings
from ..sandbox.limits import Limits
from ..sandbox.modes import CALLS as MODE_CALLS
from ..sandbox.parent import ChildDied, ChildTimeout, Worker
from ..sandbox.protocol import ProtocolError, decode, encode
from ..sandbox.session import Session, case_to_wire
from .modes import MODES, mode_inputs, other_inputs
from .verdicts import Outcome, failing_verdict

MAX_TEXT = 8000


_CONTROL = {c: None for c in list(range(0, 9)) + list(range(11, 32)) + list(range(127, 160))}


def _visible(c: str) -> str:
    if c.isprintable() or c in "\n\t":
        return c
    return " " if unicodedata.category(c) == "Zs" else ""


def clean(s: str) -> str:
    """A worker's string without control characters (newlines and tabs kept): no terminal escape
    sequence a submission writes into an exception or its output reaches the grader's terminal,
    and no invisible Unicode formatting either (bidirectional overrides that show a line
    reversed, zero-width characters, line and paragraph separators); other spaces become ' '."""
    s = s.translate(_CONTROL)
    return s if s.isprintable() else "".join(map(_visible, s))


def text(v: Any, limit: int = MAX_TEXT) -> str:
    return clean(v[:limit]) if isinstance(v, str) else ""


def texts(v: Any, n: int = 200, limit: int = 600) -> list[str]:
    return [clean(s[:limit]) for s in v[:n] if isinstance(s, str)] if isinstance(v, list) else []


def str_map(v: Any, n: int = 200, limit: int = 2000) -> dict[str, str]:
    if not isinstance(v, dict):
        return {}
    return {clean(k[:200]): clean(s[:limit]) for k, s in list(v.items())[:n]
            if isinstance(k, str) and isinstance(s, str)}


@dataclass
class Prepared:
    caps: Findings
    notes: list
    kind: str
    framework: str


@dataclass
class Reply:
    values: dict = field(default_factory=dict)
    again: list = field(default_factory=list)         # per extra run: {key: array}
    dtypes: dict = field(default_factory=dict)
    missing: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    weights_averaged: bool = False
    mapping: list = field(default_factory=list)
    absent: list = field(default_factory=list)
    adapter_notes: list = field(default_factory=list)   # general notes (the report's "note:" lines)
    unvaried: dict = field(default_factory=dict)     # forward arguments no run varied (reading/unvaried.py)
    modes: dict = field(default_factory=dict)        # per other mode (sandbox/modes.py): {key: array}
    mode_cases: dict = field(default_factory=dict)   # per other mode: the Case it ran on (inputs)


def asked_modes(framework: str) -> tuple[str, ...]:
    """The other modes each example is also run in (core/modes.py compares them)."""
    return tuple(m for m in MODES if m != ("decoy" if framework == "torch" else "nograd"))


def _failure(h: dict, case: Case | None = None, keys=()) -> Outcome:
    """A failure the worker reported: a known failing verdict, and a quantity only if it is one of
    this case's (`keys`): any other string would reach the report's labels, hidden checks' too."""
    verdict = failing_verdict(h.get("verdict"))
    q = h.get("quantity")
    q = q if isinstance(q, str) and q in keys else None
    msg = text(h.get("message")) or "the candidate failed"
    if verdict != h.get("verdict"):
        msg = (f"the submission's process reported the verdict {text(h.get('verdict'), 40)!r}, "
               f"which only the oracle may give: {msg}")
    return Outcome(verdict, quantity=q, message=msg, case=case,
                   traceback=text(h.get("traceback")), printed=text(h.get("printed"), 4000))


def may_be_absent(ref: str, shape: tuple, name_map: dict) -> bool:
    """Only biases, 1-D norm parameters and an attention's own output projection (`out_proj.weight`,
    held at the identity) may be missing from a submission (held at their neutral value), or what
    the user mapped to '-'; a worker claiming more is not believed. Each is a "parameters" gap."""
    leaf = ref.rsplit(".", 1)[-1]
    owner = ref.rsplit(".", 1)[0] if "." in ref else ""
    return (name_map.get(ref) == "-" or leaf == "bias" or (ref == "out_proj.weight" and len(shape) == 2)
            or (len(shape) == 1 and ("norm" in owner or owner == "")))


def validate_run(h: dict, arrays: dict, case: Case, comp: Component, runs: int = 1,
                 name_map: dict | None = None, modes: tuple = ()) -> Reply | Outcome:
    if h.get("status") != "ok":
        return _failure(h, case, {q.key for q in comp.quantities(case)})
    claimed = [a for a in texts(h.get("absent")) if a in case.params]
    refused = [a for a in claimed if not may_be_absent(a, case.params[a].shape, name_map or {})]
    if refused:
        return Outcome("interface_error", message="the submission has no parameter for "
                       + ", ".join(f"{a} {tuple(case.params[a].shape)}" for a in refused)
                       + ": only biases and norm parameters may be missing; name where it keeps "
                       "them with --map, or --map REF=- if it truly has none", case=case)
    keys = {q.key for q in comp.quantities(case)}
    rep = Reply(dtypes=str_map(h.get("dtypes")), missing=str_map(h.get("missing")),
                notes=str_map(h.get("notes")), weights_averaged=h.get("weights_averaged") is True,
                mapping=texts(h.get("mapping")), absent=claimed,
                adapter_notes=texts(h.get("adapter_notes"), 50),
                unvaried={k: v for k, v in str_map(h.get("unvaried"), 24, 80).items()
                          if k.lstrip("*").isidentifier()})
    again: dict[int, dict] = {}
    for name, a in arrays.items():
        kind, _, key = name.partition(":")
        if key not in keys or a.dtype != np.float64:
            return Outcome("wrong_type", message=f"the worker returned an unexpected array {name!r} "
                           f"({a.dtype}); only float64 quantities of this component are accepted",
                           case=case)
        if kind == "value":
            rep.values[key] = a
        elif kind.startswith("again") and kind[5:].isdigit() and int(kind[5:]) < 16:
            again.setdefault(int(kind[5:]), {})[key] = a
        elif kind in modes:
            rep.modes.setdefault(kind, {})[key] = a
        else:
            return Outcome("wrong_type", message=f"the worker returned an unexpected array {name!r}",
                           case=case)
    rep.again = [again[i] for i in sorted(again)]
    if "output" not in rep.values:      # every candidate has an output: a reply without it lies
        return Outcome("crashed", message="the submission's process answered without the output "
                       "(a malformed answer); nothing of it was used", case=case)
    if len(rep.again) != runs - 1 or any("output" not in g for g in rep.again):
        return Outcome("crashed", message=f"the submission's process answered {len(rep.again) + 1} "
                       f"of the {runs} runs asked for; its answer was not used", case=case)
    if "nograd" in modes and "output" not in rep.modes.get("nograd", {}):
        return Outcome("crashed", message="the submission's process answered without the run under "
                       "torch.no_grad() asked for; its answer was not used", case=case)
    return rep


def with_mode_inputs(case: Case, arrays: dict, salt: int, dtype: str, modes: tuple) -> dict:
    """Each other mode's own inputs (core/modes.other_inputs) added to a request as
    "min:MODE:NAME"; {mode: the Case it runs on}."""
    others = {m: mode_inputs(case, salt, dtype, m) for m in modes}
    arrays.update({f"min:{m}:{n}": a for m, o in others.items() for n, a in o.inputs.items()})
    arrays.update({f"mdout:{m}": o.dout for m, o in others.items() if o.dout is not case.dout})
    return others


def reply_budget(case: Case, arrays: dict, runs: int) -> int:
    """The most array bytes a worker's answer to this case can need: every quantity (output,
    weights, a gradient per input and parameter) seven times (the main run's, and the decoy,
    aliased, strided, broadcast_mask, relaid and mask_dtype modes' gradients), output and
    weights again per extra run and per other mode, as float64; a reply declaring more is
    refused before the parent reads (or allocates) it."""
    n = sum(int(np.size(a)) for a in arrays.values())
    n += int(np.prod(case.out_shape)) + int(np.prod(case.weights_shape or (0,)))
    return 8 * (n * 7 + (int(np.prod(case.out_shape)) + int(np.prod(case.weights_shape or (0,))))
                * (max(runs, 1) + len(MODES))) + (1 << 20)


def unaffordable(caps: Findings) -> Outcome | None:
    """The sizes a worker says the candidate's code fixes (a global d_model, d_ff as a multiple
    of it) are drawn by the parent, which builds every array of each example in its own memory:
    a claim implying weight matrices over MAX_FIXED_MATRIX elements is refused, whoever made it
    (d_model 512 with d_ff 2048 is 1 Mi elements; 4096 with 16 x 4096 was 2 GiB a matrix)."""
    width = (caps.fixed_sizes or {}).get("d_model")
    if not width:
        return None
    widest = width * max(1, caps.d_ff_ratio or 1)
    if width * widest <= MAX_FIXED_MATRIX:
        return None
    return Outcome("interface_error", message=(
        f"the candidate's code fixes d_model = {width}" + (
            f" and d_ff = {caps.d_ff_ratio} x d_model" if caps.d_ff_ratio else "")
        + f": a {width} x {widest} weight matrix per example is more than the oracle draws "
        f"(at most {MAX_FIXED_MATRIX} elements); make the width a constructor argument"))


class SandboxBackend:
    """A persistent worker process per submission (restarted, and re-prepared, after it dies)."""

    isolated = True

    def __init__(self, spec: str, comp: Component, opts, forbidden=(), limits: Limits | None = None,
                 threads: int | None = None):
        loc, sep, names = spec.rpartition(":")
        if sep and (loc.endswith(".py") or "/" in loc or os.sep in loc):
            spec = f"{os.path.abspath(loc)}:{names}"
        self.spec, self.comp, self.opts = spec, comp, opts
        self.forbidden = list(forbidden)
        self.worker = Worker(limits, threads)
        self.imports: set[str] = set()
        self.violations: list[str] = []
        self.prepared: Prepared | None = None
        self.salt = secrets.randbits(64)     # the other modes' inputs: never sent to the worker

    def _ask(self, header: dict, arrays: dict | None, timeout: float, case=None, stages: int = 1,
             max_reply: int = 1 << 20):
        try:
            h, a = self.worker.request(header, arrays, timeout, stages, max_reply)
        except ChildTimeout as exc:
            what = "loading and building the candidate" if header["op"] == "prepare" else \
                "calling the candidate"
            return None, None, Outcome("timeout", message=f"{what} did not "
                                       f"finish within {exc.seconds:g} s; its process and "
                                       f"everything it started were killed", case=case)
        except ChildDied as exc:
            return None, None, Outcome("crashed", message=text(str(exc)), case=case)
        except ProtocolError as exc:
            return None, None, Outcome("crashed", message=f"the submission's process sent a "
                                       f"malformed answer ({text(str(exc), 300)}); it was killed",
                                       case=case)
        self.imports.update(m for m in texts(h.get("imports"), 300, 100))
        for v in texts(h.get("violations"), 50, 300):
            if v not in self.violations:
                self.violations.append(v)
        return h, a, None

    def _search_path(self) -> list[str]:
        """The oracle's working directory goes on the worker's sys.path only for a
        `package.module:Name` spec (a file spec is found by its path: an instructor's
        solution.py beside the oracle must not be importable)."""
        loc = self.spec.rpartition(":")[0]
        return [] if loc.endswith(".py") or os.sep in loc or "/" in loc else [os.getcwd()]

    def prepare(self) -> Prepared | Outcome:
        header = {"op": "prepare", "component": self.comp.name, "options": asdict(self.opts),
                  "spec": self.spec, "search_path": self._search_path(), "forbidden": self.forbidden,
                  "import_path": _import_path(),
                  "deny_read": [str(d) for d in self.worker.limits.deny_read]}
        h, _, bad = self._ask(header, None, max(60.0, float(self.opts.timeout or 0)))
        if bad is not None:
            return bad
        if h.get("status") != "ok":
            return _failure(h)
        caps = Findings.from_wire(h.get("caps"), self.comp, self.opts.settings)
        too_big = unaffordable(caps)
        if too_big is not None:
            return too_big
        self.prepared = Prepared(caps, texts(h.get("notes"), 50), text(h.get("kind"), 100),
                                 "torch" if h.get("framework") == "torch" else "numpy")
        return self.prepared

    def run(self, case: Case, runs: int) -> Reply | Outcome:
        if not self.worker.alive and self.prepared is not None:
            again = self.prepare()                      # a fresh worker after a crash
            if isinstance(again, Outcome):
                return again
        ch, arrays = case_to_wire(case)
        modes = asked_modes(self.prepared.framework if self.prepared else "numpy")
        others = with_mode_inputs(case, arrays, self.salt, self.opts.dtype, modes)
        limit = float(self.opts.timeout or 60.0)       # per stage: construct, each call, each mode
        h, a, bad = self._ask({"op": "run", "case": ch, "runs": runs, "modes": list(modes)}, arrays,
                              limit, case, stages=runs + 2 + MODE_CALLS * len(modes),
                              max_reply=reply_budget(case, arrays, runs))
        rep = bad if bad is not None else validate_run(h, a, case, self.comp, runs,
                                                       self.opts.name_map, modes)
        if isinstance(rep, Reply):
            rep.mode_cases = others
        return rep

    def infer(self, case: Case) -> tuple[dict, Case] | Outcome:
        """The case's forward under torch.inference_mode(), on inputs of its own, never those of a
        run before it ("min:NAME"): ({key: array}, the Case it ran on). Asked for only at the end
        of a check (core/inference.py)."""
        ch, arrays = case_to_wire(case)
        other = other_inputs(case, self.salt, self.opts.dtype, "inference")
        arrays.update({f"min:{n}": a for n, a in other.inputs.items()})
        h, a, bad = self._ask({"op": "infer", "case": ch, "absent": sorted(case.absent)}, arrays,
                              float(self.opts.timeout or 60.0), case, stages=2,
                              max_reply=reply_budget(case, arrays, 1))
        if bad is not None:
            return bad
        if h.get("status") != "ok":
            return _failure(h, case, {"output"})
        names = {"inference:output", "inference:attention_weights"}
        if "inference:output" not in a or any(n not in names or v.dtype != np.float64
                                              for n, v in a.items()):
            return Outcome("crashed", message="the submission's process answered the run under "
                           "torch.inference_mode() without its output or with other arrays; its "
                           "answer was not used", case=case)
        return {n.partition(":")[2]: v for n, v in a.items()}, other

    def close(self) -> None:
        self.worker.close()


class InProcessBackend:
    """For Python objects given to check(): no isolation (the report says so), same validation."""

    isolated = False

    def __init__(self, obj, backward, comp: Component, opts):
        self.session = Session(comp.name, asdict(opts), obj=obj, backward=backward)
        self.comp, self.opts = comp, opts
        self.salt = secrets.randbits(64)
        self.imports: set[str] = set()
        self.violations: list[str] = []
        self.prepared: Prepared | None = None

    def _limited(self, fn, what: str, case=None):
        res = run_limited(fn, self.opts.timeout)
        if isinstance(res, TimedOut):
            return None, Outcome("timeout", message=f"{what} did not finish within "
                                 f"{res.seconds:g} s (--timeout)", printed=res.printed, case=case)
        if isinstance(res, Raised):
            return None, Outcome("oracle_error", message=f"{what}: the oracle failed: "
                                 f"{res.describe()}", traceback=res.full_traceback, case=case)
        return res.value, None

    def prepare(self) -> Prepared | Outcome:
        h, bad = self._limited(lambda: decode(encode(self.session.prepare())[8:])[0],
                               "preparing the candidate")
        if bad is not None:
            return bad
        if h.get("status") != "ok":
            return _failure(h)
        self.prepared = Prepared(Findings.from_wire(h.get("caps"), self.comp, self.opts.settings),
                                 texts(h.get("notes"), 50), text(h.get("kind"), 100),
                                 "torch" if h.get("framework") == "torch" else "numpy")
        return self.prepared

    def run(self, case: Case, runs: int) -> Reply | Outcome:
        ch, arrays = case_to_wire(case)
        modes = asked_modes(self.prepared.framework if self.prepared else "numpy")
        others = with_mode_inputs(case, arrays, self.salt, self.opts.dtype, modes)
        # through the wire format both ways, as with a worker: copies, checked dtypes
        arrays = {k: np.array(v, copy=True) for k, v in arrays.items()}
        res, bad = self._limited(lambda: self.session.run({"case": ch}, arrays, runs, modes=modes),
                                 "calling the candidate", case)
        if bad is not None:
            return bad
        h, out = res
        msg = encode(h, out)
        head, specs = decode(msg[8:8 + int.from_bytes(msg[:8], "little")])
        pos, back = 8 + int.from_bytes(msg[:8], "little"), {}
        for name, dt, shape, size in specs:
            back[name] = np.frombuffer(msg[pos:pos + size], dtype=dt).reshape(shape).copy()
            pos += size
        rep = validate_run(head, back, case, self.comp, runs, self.opts.name_map, modes)
        if isinstance(rep, Reply):
            rep.mode_cases = others
        return rep

    def close(self) -> None:
        pass


PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _overlaps(a: str, b: str) -> bool:
    """One folder is the other or holds it."""
    a, b = a.rstrip(os.sep) + os.sep, b.rstrip(os.sep) + os.sep
    return a.startswith(b) or b.startswith(a)


def _import_path() -> list[str]:
    """Folders on the oracle's PYTHONPATH the submission may import from, as it would when run by
    hand (a package of its own: `from mingpt.utils import CfgNode`). Never this project (the
    reference) or a folder holding it, and never the oracle's working directory, where an
    instructor's solution may sit. The worker's environment itself stays scrubbed; these folders
    are put on its sys.path and kept visible in its private view."""
    hidden = (os.path.realpath(PROJECT_ROOT), os.path.realpath(os.getcwd()))
    out: list[str] = []
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        r = os.path.realpath(p) if p else ""
        if r and os.path.isdir(r) and not any(_overlaps(r, h) for h in hidden) and r not in out:
            out.append(r)
    return out
