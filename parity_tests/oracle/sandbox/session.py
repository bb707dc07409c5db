"""The child side of a check: load the submission, build it per example, run it, hand back arrays.

Everything here runs next to the submission (in its worker process, see child.py), so nothing here
decides anything: it reports what the candidate did as plain data (protocol.py) and the parent
(runner.py) validates it, computes the reference and gives the verdict. The same code serves the
in-process mode (a Python object handed to `check`), through the same encoding, so both paths are
validated alike.

    s = Session("mha", opts_dict, spec="student.py:MHA")
    header = s.prepare()                      # {"status": "ok", "caps": ..., "kind": ...} or a failure
    header, arrays = s.run(case_header, case_arrays)
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import secrets
import sys
import threading
import traceback
from typing import Any, Callable

import numpy as np

from ..components import Case, get, neutral_value
from ..reading.adapters import Adapter, CandidateProblem, Options
from ..reading.calls import _TailBuffer  # the same bounded sink the in-process path uses
from ..reading.loader import LoadError, from_object, load
from ..reading.naming import InterfaceError
from ..reading.package_import import anchor_folder
from ..reading.unvaried import unvaried
from .activation_lookup import spelled_on_lookup
from .adapted_masks import adapted_convention, adapted_form, hold_declared
from .modes import MODES, RUNS, WHAT, inference

TEXT_TIMEOUT = 2.0   # seconds allowed to turn a candidate's exception into text
_ORACLE_DIRS = (os.path.join("parity_tests", "oracle", ""), "/threading.py", "/contextlib.py")


def candidate_traceback(exc: BaseException, skip: tuple[str, ...] = _ORACLE_DIRS) -> str:
    """The traceback without the oracle's own frames (the candidate's frames are what matter)."""
    frames = traceback.extract_tb(exc.__traceback__)
    kept = [f for f in frames if not any(s in f.filename for s in skip)]
    return "".join(traceback.format_list(kept or frames[-3:])
                   + traceback.format_exception_only(type(exc), exc))


class Failed(Exception):
    """A stage failed; .reply is the failure header sent to the parent."""

    def __init__(self, reply: dict):
        super().__init__(reply.get("verdict"))
        self.reply = reply


def safe_text(fn: Callable[[], str], limit: int = 4000) -> str:
    """fn() (str(exc), a traceback...) in a daemon thread with a time limit: a candidate's __str__
    may block or loop; then the text says so instead of hanging the worker."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["s"] = str(fn())
        except BaseException as exc:  # noqa: BLE001
            box["s"] = f"<text unavailable: {type(exc).__name__} while formatting it>"

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(TEXT_TIMEOUT)
    s = box.get("s")
    if not isinstance(s, str):
        return f"<text unavailable: formatting it did not finish within {TEXT_TIMEOUT:g} s>"
    return s[:limit]


def _fresh_rng() -> None:
    """New, unpredictable global RNG states (random, numpy.random, torch if loaded): a call that
    depends on them shows up as nondeterministic instead of hiding behind a fixed seed."""
    s = secrets.randbits(31)
    random.seed(s)
    np.random.seed(s)
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            torch.manual_seed(s)


def classify(exc: BaseException, what: str, printed: str = "") -> dict:
    """An exception raised while doing `what` as a failure reply (text made under a time limit)."""
    tname = safe_text(lambda: type(exc).__name__, 200)
    msg = safe_text(lambda: str(exc))
    desc = f"{tname}: {msg}" if msg else tname
    if msg.startswith("<text unavailable"):          # its __str__ blocks: never call it again
        tb = "".join(traceback.format_list(traceback.extract_tb(exc.__traceback__)[-8:]))
        return {"verdict": "raised", "message": f"{what} raised {desc}", "printed": printed,
                "traceback": tb[-8000:] + desc}
    frames = safe_text(lambda: traceback.extract_tb(exc.__traceback__)[-1].filename
                       if exc.__traceback__ else "", 500)
    in_oracle = _ORACLE_DIRS[0] in frames
    if in_oracle and safe_text(lambda: traceback.extract_tb(exc.__traceback__)[-1].name, 100) \
            in VALUE_READERS:
        # the oracle's reader raised on the candidate's returned object (a tensor without data,
        # on the meta device): the candidate's output, never the oracle's failure
        return {"verdict": "wrong_type", "message": f"{what}: the candidate returned an array the "
                f"oracle cannot read as numbers ({desc}); return a dense tensor or array holding "
                f"its values, on the CPU"}
    if isinstance(exc, InterfaceError):
        return {"verdict": "interface_error", "message": f"{what}: {msg}" if what else msg}
    if isinstance(exc, CandidateProblem):
        return {"verdict": safe_text(lambda: exc.verdict, 40),
                "message": f"{what}: " + safe_text(lambda: exc.message),
                "quantity": safe_text(lambda: exc.quantity, 200) if exc.quantity else None}
    if isinstance(exc, LoadError):
        return {"verdict": "load_error", "message": msg}
    if in_oracle and _through_submission(exc):
        # the submission's own code called into an object the oracle made (a config object
        # lacking an attribute it reads, ...): its interface, never an oracle bug
        return {"verdict": "interface_error", "message": f"{what}: the candidate's code failed "
                f"on an object the oracle handed it: {desc}" + (
                    " (the oracle's config object has no such attribute: pass it with "
                    "--init-kwargs or an --adapter build hook)"
                    if isinstance(exc, AttributeError) else ""),
                "traceback": safe_text(lambda: candidate_traceback(exc, ()), 8000)}
    if in_oracle:
        if isinstance(exc, TypeError) and "argument" in msg:
            return {"verdict": "interface_error", "message": f"{what}: the candidate's signature "
                    f"does not accept the call: {desc}"}
        return {"verdict": "oracle_error", "message": f"{what}: the oracle failed: {desc}",
                "traceback": safe_text(lambda: "".join(traceback.format_exception(exc)), 8000)}
    return {"verdict": "raised", "message": f"{what} raised {desc}", "printed": printed,
            "traceback": safe_text(lambda: candidate_traceback(exc, _ORACLE_DIRS), 8000)}


VALUE_READERS = ("to_np",)   # the oracle's functions turning a candidate's returned array into NumPy
SUBMISSION_DIRS: list[str] = []     # the submission's folder (and its adapter's), set by Session


def _through_submission(exc: BaseException) -> bool:
    """Whether a frame of the submission's own files is on the traceback."""
    if not SUBMISSION_DIRS:
        return False
    try:
        return any(f.filename.startswith(tuple(SUBMISSION_DIRS))
                   for f in traceback.extract_tb(exc.__traceback__))
    except Exception:  # noqa: BLE001
        return False


STRAY_GRACE = 2.0      # seconds a call past its own limit (a probe's) is waited for before failing
STRAY_NAME = "oracle-candidate"     # reading/calls.run_limited's thread


def no_stray_call(before: frozenset = frozenset(), grace: float = STRAY_GRACE) -> None:
    """Failed (`timeout`) when a call the oracle made under a time limit (a recogniser's probe, in
    reading/calls.run_limited) did not stop at it and is still running: the submission's code must
    not run beside the scored calls, and the check must not go on as if the probe had decided.
    Threads in `before` (left by an earlier check in this process: the in-process path) are not
    this check's, nor is the thread asking (the in-process path runs a whole stage in one)."""
    me = threading.current_thread()
    for t in threading.enumerate():
        if t.name == STRAY_NAME and t.is_alive() and t not in before and t is not me:
            t.join(grace)
            if t.is_alive():
                raise Failed({"verdict": "timeout", "message": (
                    "a call the oracle made to the candidate while reading it (a probe: does it "
                    "mask the future itself, is it pre-norm...) did not finish within its time "
                    f"limit, and was still running {grace:g} s later (it ignored the request to "
                    "stop); nothing was compared beside it")})


def guarded(fn: Callable[[], Any], what: str) -> Any:
    """fn() with the candidate's printing captured; any exception becomes Failed(reply)."""
    sink = _TailBuffer()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            return fn()
    except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt from candidates too
        raise Failed(classify(exc, what, safe_text(sink.tail))) from None


# ------------------------------------------------------------------------------------------------
# cases as plain data
# ------------------------------------------------------------------------------------------------
CASE_FIELDS = ("component", "example", "hyper", "out_shape", "weights_shape", "self_attention",
               "settings")


def case_to_wire(case: Case) -> tuple[dict, dict]:
    """(header, arrays) describing a Case; the reverse of case_from_wire."""
    h = {f: getattr(case, f) for f in CASE_FIELDS}
    h["out_shape"] = list(case.out_shape)
    h["weights_shape"] = list(case.weights_shape) if case.weights_shape is not None else None
    h["inputs"] = list(case.inputs)
    h["masks"] = {n: m is not None for n, m in case.masks.items()}
    h["params"] = list(case.params)
    arrays = {f"in:{n}": a for n, a in case.inputs.items()}
    arrays.update({f"mask:{n}": m for n, m in case.masks.items() if m is not None})
    arrays.update({f"par:{n}": a for n, a in case.params.items()})
    arrays["dout"] = case.dout
    if case.row_keep is not None:
        arrays["row_keep"] = case.row_keep
    return h, arrays


def case_from_wire(h: dict, arrays: dict) -> Case:
    return Case(component=h["component"], example=h["example"], hyper=h["hyper"],
                inputs={n: arrays[f"in:{n}"] for n in h["inputs"]},
                masks={n: (arrays[f"mask:{n}"] if present else None)
                       for n, present in h["masks"].items()},
                params={n: arrays[f"par:{n}"] for n in h["params"]}, dout=arrays["dout"],
                out_shape=tuple(h["out_shape"]),
                weights_shape=tuple(h["weights_shape"]) if h["weights_shape"] is not None else None,
                row_keep=arrays.get("row_keep"), self_attention=bool(h["self_attention"]),
                settings=h["settings"])


def mode_case(case: Case, arrays: dict, mode: str = "") -> Case:
    """The example another mode runs on: that mode's own inputs ("min:MODE:NAME", or "min:NAME" for
    the run under inference mode, drawn by the parent, which compares the mode with its reference
    on them) and upstream gradient where it has one ("mdout:MODE"), the rest the example's."""
    inputs = {n: arrays.get(f"min:{mode}:{n}" if mode else f"min:{n}", a)
              for n, a in case.inputs.items()}
    return dataclasses.replace(case, inputs=inputs, dout=arrays.get(f"mdout:{mode}", case.dout))


def _to_f64(v) -> np.ndarray:
    a = np.asarray(v)
    if a.dtype.kind not in "biuf":
        raise CandidateProblem("wrong_type", f"returned an array of dtype {a.dtype}, expected numbers")
    return np.array(a, dtype=np.float64, copy=True, subok=False)


# ------------------------------------------------------------------------------------------------
class Session:
    def __init__(self, component: str, opts: dict, spec: str | None = None, obj: Any = None,
                 backward: Any = None):
        self.comp = get(component)
        self.opts = Options(**opts)
        self.declared = self.opts.held()       # before any recogniser adapts the options
        self.given_convention = self.opts.mask_convention
        self.given_rank = self.opts.mask_rank
        self.spec, self.obj, self.backward = spec, obj, backward
        loc = (spec or "").rpartition(":")[0]
        if loc.endswith(".py"):
            root = self.opts.package_root         # `from ..x`: only inside --package-root
            SUBMISSION_DIRS[:] = [(anchor_folder(loc, root) or os.path.dirname(os.path.abspath(loc)))
                                  + os.sep]
            if self.opts.adapter_path:
                SUBMISSION_DIRS.append(os.path.abspath(self.opts.adapter_path))
        self.adapter: Adapter | None = None
        self._sent: set[str] = set()       # notes already handed to the parent (by _note_key)
        self._threads = frozenset(threading.enumerate())   # no_stray_call: not this check's

    def _new_notes(self) -> list[str]:
        """The adapter's notes not yet handed over (at most 20 per reply)."""
        out = []
        for n in list(self.adapter.notes if self.adapter is not None else []):
            key = _note_key(str(n))
            if key not in self._sent and len(out) < 20:
                self._sent.add(key)
                out.append(str(n)[:600])
        return out

    def prepare(self) -> dict:
        try:
            if self.spec is not None:
                loaded = guarded(lambda: load(self.spec, timeout=None, package_root=self.opts.package_root),
                                 "loading the candidate")
            else:
                loaded = from_object(self.obj, self.backward)
            self.adapter = guarded(lambda: Adapter(loaded, self.comp, self.opts),
                                   "building the candidate")
            no_stray_call(self._threads)
        except Failed as f:
            return {"status": "failed", **f.reply}
        ad = self.adapter
        hold_declared(ad, self.declared)
        ad.caps.mask_convention = adapted_convention(ad, self.given_convention)
        ad.caps.mask_form = adapted_form(ad, self.given_rank)
        ad.given_mask_rank = self.given_rank            # modes.assigned_form hands it over again
        self._sent = {_note_key(str(n)) for n in ad.notes}
        return {"status": "ok", "caps": _jsonable(ad.caps.to_wire()), "notes": [str(n) for n in ad.notes],
                "kind": str(ad.kind), "framework": str(ad.framework)}

    def run(self, h: dict, arrays: dict, runs: int = 2, tick=lambda: None,
            modes: tuple = ()) -> tuple[dict, dict]:
        """Build, run `runs` times (fresh instance and fresh RNG state each time), then once in each
        of `modes` (modes.py); return what came out as (header, float64 arrays). `tick()` after
        each stage lets the parent time each call."""
        ad = self.adapter
        hold_declared(ad, self.declared)
        case = case_from_wire(h["case"], arrays)
        ad.spell_lookup = False             # each example tries the assignment's names first
        try:
            _fresh_rng()
            inst = guarded(lambda: ad.instantiate(case), "constructing the candidate")
            tick()
            absent = [ref for ref, e in inst.entries.items() if e.cand is None]
            for ref in absent:
                case.params[ref] = neutral_value(ref, case.params[ref].shape)
                case.absent.add(ref)
            mapping = [str(e.describe()) for e in inst.entries.values()]
            inst, produced = guarded(lambda: spelled_on_lookup(ad, inst, case), "calling the candidate")
            tick()
            held = guarded(lambda: unvaried(ad, inst), "reading the forward's signature")
            out = {f"value:{k}": guarded(lambda v=v: _to_f64(v), f"reading {k}")
                   for k, v in produced.values.items()}
            for i in range(1, runs):
                _fresh_rng()
                again = guarded(lambda: ad.execute(ad.instantiate(case), case),
                                "calling the candidate a second time")
                tick()
                for k in ("output", "attention_weights"):
                    if k in again.values:
                        out[f"again{i}:{k}"] = guarded(lambda k=k: _to_f64(again.values[k]),
                                                       f"reading {k}")
            for mode in (m for m in MODES if m in modes):
                _fresh_rng()
                got = guarded(lambda mode=mode: RUNS[mode](ad, mode_case(case, arrays, mode), tick),
                              WHAT[mode])
                tick()
                for k, v in got.items():
                    out[f"{mode}:{k}"] = guarded(lambda v=v: _to_f64(v), f"reading {k}")
            no_stray_call(self._threads)
        except Failed as f:
            return {"status": "failed", **f.reply}, {}
        header = {"status": "ok", "mapping": mapping, "absent": absent,
                  "dtypes": {str(k): str(v) for k, v in produced.dtypes.items()},
                  "missing": {str(k): str(v) for k, v in produced.missing.items()},
                  "notes": {str(k): str(v) for k, v in produced.notes.items()},
                  "weights_averaged": bool(produced.weights_averaged),
                  "unvaried": {str(k): str(v) for k, v in held.items()},
                  # notes made while building or calling (arrays left as constructed...), after
                  # prepare() sent the first ones
                  "adapter_notes": self._new_notes()}
        return header, out


    def infer(self, h: dict, arrays: dict, tick=lambda: None) -> tuple[dict, dict]:
        """The example's forward under torch.inference_mode() (modes.inference), on the other
        modes' inputs; asked for only once a check's runs with autograd are over."""
        case = case_from_wire(h["case"], arrays)
        try:
            _fresh_rng()
            for ref in (r for r in h.get("absent") or () if r in case.params):
                case.params[ref] = neutral_value(ref, case.params[ref].shape)
            self.adapter.spell_lookup = False
            got = guarded(lambda: spelled_on_lookup(self.adapter, None, case, lambda: inference(
                              self.adapter, mode_case(case, arrays), tick))[1],
                          "calling the candidate under torch.inference_mode()")
            tick()
            out = {f"inference:{k}": guarded(lambda v=v: _to_f64(v), f"reading {k}")
                   for k, v in got.items()}
        except Failed as f:
            return {"status": "failed", **f.reply}, {}
        return {"status": "ok"}, out


def _note_key(note: str) -> str:
    """What a note is about: a constructor argument's note is made again, with this example's
    values, at every build; the first one (from the probe build) says what was guessed."""
    if note.startswith("constructor argument "):
        return note.split(":", 1)[0]
    return note


def _jsonable(o):
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, set)):
        return [_jsonable(v) for v in o]
    if isinstance(o, (bool, int, float, str)) or o is None:
        return o
    if isinstance(o, np.generic):
        return o.item()
    return str(o)
