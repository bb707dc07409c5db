"""The search: Hypothesis draws examples, the candidate and the reference run on each, and the first
quantity that differs stops the search; Hypothesis then shrinks the example to a minimal one.

    result = check("mha", "student.py:MultiHeadAttention", Options(mask_convention="keep"))
    result.verdict      # "match", "mismatch", ... (see VERDICTS)
    result.exit_code    # 0 match, 1 the candidate computes something else, 2 cannot load/call it

Per example, in dependency order: output, attention weights (when returned), input gradients, then
each parameter gradient; the first one out of tolerance (tolerances: parity_tests.harness) is the
verdict's quantity. Before the numbers: exceptions, time-outs, wrong return types, inputs modified in
place and (on the first example) nondeterminism get verdicts of their own.
"""
from __future__ import annotations

import json
import platform
import shlex
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from parity_tests.harness.compare import measure

from . import __version__
from .adapters import Adapter, CandidateProblem, Options
from .calls import Finished, Raised, TimedOut, run_limited
from .components import Case, Component, Quantity, get, neutral_value, quantity_kind, quantity_label
from .loader import Loaded, LoadError, from_object, load
from .naming import InterfaceError

VERDICTS: dict[str, tuple[int, str]] = {
    # verdict: (exit status, meaning)
    "match": (0, "every quantity matched the reference on every example"),
    "mismatch": (1, "a quantity differs from the reference beyond tolerance"),
    "non_finite": (1, "the candidate produced NaN or inf where the reference is finite"),
    "wrong_shape": (1, "a returned array has the wrong shape"),
    "wrong_dtype": (1, "the output's dtype is not the input dtype"),
    "mutates_input": (1, "the candidate modified an input in place"),
    "nondeterministic": (1, "the same input gave different outputs (dropout left on? randomness?)"),
    "missing_gradient": (1, "no gradient could be taken through the candidate's output"),
    "raised": (2, "the candidate raised an exception"),
    "wrong_type": (2, "the candidate returned something other than an array/tensor"),
    "timeout": (2, "a call did not finish within the time limit"),
    "load_error": (2, "the candidate could not be loaded"),
    "interface_error": (2, "the candidate cannot be constructed, called or mapped as the component "
                           "requires"),
    "oracle_error": (3, "the oracle itself failed (a bug in the oracle: please report it)"),
}

AXES = {
    "sdpa": {"output": ("batch", "head", "query", "feature"),
             "attention_weights": ("batch", "head", "query", "key"),
             "grad_input:q": ("batch", "head", "query", "feature"),
             "grad_input:k": ("batch", "head", "key", "feature"),
             "grad_input:v": ("batch", "head", "key", "feature")},
    "mha": {"output": ("batch", "query", "feature"),
            "attention_weights": ("batch", "head", "query", "key"),
            "grad_input:query": ("batch", "query", "feature"),
            "grad_input:key": ("batch", "key", "feature"),
            "grad_input:value": ("batch", "key", "feature"),
            "grad_input:x": ("batch", "position", "feature")},
    "model": {"output": ("batch", "position", "vocab")},
}


def axes_for(component: str, key: str, ndim: int) -> tuple[str, ...]:
    names = AXES.get(component, {}).get(key)
    if names is None and (key == "output" or key.startswith("grad_input:")) and ndim == 3:
        names = ("batch", "position", "feature")
    if names is None and key.startswith("grad_param:"):
        names = ("row", "column") if ndim == 2 else ("index",)
    return names if names is not None and len(names) == ndim else tuple(f"dim{i}" for i in range(ndim))


@dataclass
class Outcome:
    """What one example gave."""

    verdict: str = "match"
    quantity: str | None = None
    message: str = ""
    detail: dict = field(default_factory=dict)
    checked: list = field(default_factory=list)
    not_checked: dict = field(default_factory=dict)
    mapping: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    traceback: str = ""
    printed: str = ""
    case: Case | None = None
    available: list = field(default_factory=list)   # quantities the candidate provided
    after: dict = field(default_factory=dict)       # quantities after the first difference

    @property
    def ok(self) -> bool:
        return self.verdict == "match"


@dataclass
class CheckResult:
    """The oracle's answer for one candidate and component (JSON via to_dict)."""

    verdict: str
    exit_code: int
    component: str
    candidate: str
    kind: str = ""
    quantity: str | None = None
    quantity_label: str | None = None
    quantity_group: str | None = None
    message: str = ""
    detail: dict = field(default_factory=dict)
    example: dict | None = None
    case: dict = field(default_factory=dict)
    replay: str | None = None
    mapping: list = field(default_factory=list)
    checked: list = field(default_factory=list)
    not_checked: dict = field(default_factory=dict)
    quantities: list = field(default_factory=list)   # what the candidate provides, in order
    examples_run: int = 0
    notes: list = field(default_factory=list)
    traceback: str = ""
    printed: str = ""
    options: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    elapsed_s: float = 0.0
    flaky: bool = False

    @property
    def status(self) -> str:
        return {0: "pass", 1: "fail"}.get(self.exit_code, "error")

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["status"] = self.status
        d["meaning"] = VERDICTS[self.verdict][1]
        return d


def versions() -> dict:
    import sys

    import hypothesis

    v = {"oracle": __version__, "python": platform.python_version(), "numpy": np.__version__,
         "hypothesis": hypothesis.__version__}
    try:
        from importlib.metadata import version
        v["npformer"] = version("npformer")
    except Exception:  # noqa: BLE001 - running from a source checkout
        v["npformer"] = "source checkout"
    if "torch" in sys.modules:
        v["torch"] = sys.modules["torch"].__version__
    return v


class _Stop(Exception):
    """Raised inside the Hypothesis test to mark an example as failing."""


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# ------------------------------------------------------------------------------------------------
class Checker:
    def __init__(self, component: str | Component, candidate: Any, opts: Options | None = None,
                 backward: Any = None):
        self.opts = opts or Options()
        self.opts.validate()
        self.comp = get(component) if isinstance(component, str) else component
        self.candidate = candidate
        self.backward = backward
        self.loaded: Loaded | None = None
        self.adapter: Adapter | None = None
        self.examples_run = 0
        self.checked: list[str] = []
        self.not_checked: dict[str, str] = {}
        self.notes: list[str] = []
        self.mapping: list[str] = []
        self.available: list[str] = []
        self.fixed = self._parse_settings()

    def _parse_settings(self) -> dict:
        fixed = {}
        for k, v in self.opts.settings.items():
            if k not in self.comp.settable:
                raise ValueError(f"--set {k}: component {self.comp.name!r} accepts "
                                 f"{', '.join(sorted(self.comp.settable)) or 'no settings'}")
            try:
                fixed[k] = self.comp.settable[k](v)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"--set {k}={v!r}: {exc}") from None
        self.opts.settings = fixed
        return fixed

    # -- setup ------------------------------------------------------------------------------------
    def _load(self) -> Outcome | None:
        try:
            if isinstance(self.candidate, str):
                self.loaded = load(self.candidate, timeout=max(60.0, self.opts.timeout or 0))
            else:
                self.loaded = from_object(self.candidate, self.backward)
        except LoadError as exc:
            return Outcome("load_error", message=str(exc))
        res = run_limited(lambda: Adapter(self.loaded, self.comp, self.opts), self.opts.timeout)
        if isinstance(res, TimedOut):
            return Outcome("timeout", message=f"preparing the candidate did not finish within "
                                              f"{res.seconds:g} s")
        if isinstance(res, Raised):
            if isinstance(res.exception, InterfaceError):
                return Outcome("interface_error", message=res.message)
            if isinstance(res.exception, CandidateProblem):
                return Outcome(res.exception.verdict, message=res.exception.message)
            if res.in_oracle and not (isinstance(res.exception, TypeError)
                                      and "argument" in res.message):
                return Outcome("oracle_error", message=f"preparing the candidate: the oracle "
                               f"failed: {res.describe()}", traceback=res.full_traceback)
            return Outcome("raised", message=f"building the candidate raised {res.describe()}",
                           traceback=res.traceback, printed=res.printed)
        self.adapter = res.value
        self.notes.extend(self.adapter.notes)
        return None

    # -- one example ------------------------------------------------------------------------------
    def _limited(self, fn, what: str, case: Case) -> tuple[Any, Outcome | None]:
        res = run_limited(fn, self.opts.timeout)
        if isinstance(res, Finished):
            return res.value, None
        if isinstance(res, TimedOut):
            return None, Outcome("timeout", message=f"{what} did not finish within "
                                                    f"{res.seconds:g} s (--timeout)",
                                 printed=res.printed, case=case)
        exc = res.exception
        if isinstance(exc, InterfaceError):
            return None, Outcome("interface_error", message=str(exc), case=case)
        if isinstance(exc, CandidateProblem):
            return None, Outcome(exc.verdict, quantity=exc.quantity, message=exc.message, case=case)
        if res.in_oracle:
            if isinstance(exc, TypeError) and "argument" in str(exc):
                return None, Outcome("interface_error", message=f"{what}: the candidate's signature "
                                     f"does not accept the call: {res.describe()}", case=case)
            return None, Outcome("oracle_error", message=f"{what}: the oracle failed: "
                                 f"{res.describe()}", traceback=res.full_traceback, case=case)
        return None, Outcome("raised", message=f"{what} raised {res.describe()}",
                             traceback=res.traceback, printed=res.printed, case=case)

    def evaluate(self, example: dict, determinism: bool = False) -> Outcome:
        comp, opts, ad = self.comp, self.opts, self.adapter
        try:
            case = comp.build(example, opts.dtype, ad.caps)
        except Exception as exc:  # noqa: BLE001
            return Outcome("oracle_error", message=f"building the example failed: {exc!r}")
        inst, bad = self._limited(lambda: ad.instantiate(case), "constructing the candidate", case)
        if bad:
            return bad
        for ref, e in inst.entries.items():
            if e.cand is None:
                case.params[ref] = neutral_value(ref, case.params[ref].shape)
                case.absent.add(ref)
        mapping = [e.describe() for e in inst.entries.values()]
        try:
            ref_vals = comp.reference(case)
        except Exception as exc:  # noqa: BLE001
            return Outcome("oracle_error", message=f"the reference failed on this example: {exc!r}",
                           case=case)
        produced, bad = self._limited(lambda: ad.execute(inst, case), "calling the candidate", case)
        if bad:
            bad.mapping = mapping
            return bad
        if determinism:
            again, bad = self._limited(lambda: ad.execute(ad.instantiate(case), case),
                                       "calling the candidate a second time", case)
            if bad:
                return bad
            a, b = produced.values.get("output"), again.values.get("output")
            if a is not None and b is not None and a.shape == b.shape and not np.array_equal(
                    a, b, equal_nan=True):
                idx = np.unravel_index(int(np.nanargmax(np.abs(a - b))), a.shape) if a.size else ()
                return Outcome("nondeterministic", quantity="output",
                               message=("two calls on the same input and weights gave different "
                                        "outputs (dropout still active? random numbers in forward?)"),
                               detail={"index": [int(i) for i in idx],
                                       "first": float(a[idx]), "second": float(b[idx])},
                               case=case, mapping=mapping)
        out = Outcome(case=case, mapping=mapping)
        out.available = [q.key for q in comp.quantities(case) if q.key in produced.values
                         and q.key.split(":", 1)[-1] not in case.absent]
        for q in comp.quantities(case):
            name = q.key.split(":", 1)[-1]
            if q.kind == "param_grad" and name in case.absent:
                out.not_checked[q.key] = "the candidate has no such parameter"
                continue
            if q.key not in produced.values:
                out.not_checked[q.key] = produced.missing.get(q.key, "not returned by the candidate")
                continue
            got = produced.values[q.key]
            ref = ref_vals[q.key]
            label = q.label
            if q.key == "attention_weights" and produced.weights_averaged:
                ref = ref.mean(axis=1)
                label += " (averaged over heads, as returned)"
            if q.key == "output" and case.row_keep is not None and got.shape == ref.shape:
                keep = case.row_keep.reshape(case.row_keep.shape + (1,) * (ref.ndim - 2))
                got, ref = np.where(keep, got, 0.0), np.where(keep, ref, 0.0)
            if q.key == "output" and opts.check_dtype and produced.dtypes.get("output") not in (
                    None, opts.dtype):
                return Outcome("wrong_dtype", quantity=q.key,
                               message=f"output has dtype {produced.dtypes['output']}, inputs were "
                                       f"{opts.dtype} (the output must keep the input dtype)",
                               case=case, mapping=mapping, checked=out.checked)
            rep = measure(label, got, ref, dtype=opts.dtype, quantity=q.kind)
            if out.quantity is not None:
                # after the first difference: measured for the report, never the verdict
                out.after[q.key] = "match" if rep.passed else "differs"
                continue
            if rep.passed:
                out.checked.append(q.key)
                continue
            verdict = "mismatch"
            if rep.problem.startswith("shape"):
                verdict = "wrong_shape"
            elif rep.problem.startswith("non-finite"):
                verdict = "non_finite"
            out.verdict, out.quantity = verdict, q.key
            out.detail = self._detail(rep, q.key, got, ref, produced.notes.get(q.key))
            out.message = self._headline(verdict, label, out.detail)
            row_note = self._empty_row_note(case, out.detail)
            if row_note:
                out.notes.append(row_note)
        if out.after:
            out.detail["after_first_difference"] = dict(out.after)
        return out

    @staticmethod
    def _empty_row_note(case: Case, d: dict) -> str | None:
        """Say so when the worst element sits in a query row that the mask hides entirely."""
        at = d.get("worst_at", {})
        keep = next((m for m in case.masks.values() if m is not None), None)
        if keep is None or "batch" not in at or "query" not in at:
            return None
        b, qi = at["batch"], at["query"]
        if b < keep.shape[0] and qi < keep.shape[2] and not keep[b, :, qi, :].any():
            return (f"query {qi} of batch {b} may attend to no key at all (a fully masked row): "
                    f"with --strict the reference gives 0 there (safe softmax, as "
                    f"F.scaled_dot_product_attention); a -1e9 fill gives the mean of the values "
                    f"and a -inf fill gives NaN")
        return None

    def _detail(self, rep, key: str, got: np.ndarray, ref: np.ndarray, note: str | None) -> dict:
        d: dict[str, Any] = {"quantity": key, "shape": list(rep.shape),
                             "got_shape": list(np.shape(got))}
        if rep.problem:
            d["problem"] = rep.problem
        if rep.worst_index != () or rep.shape == ():
            idx = [int(i) for i in rep.worst_index]
            d["worst_index"] = idx
            d["worst_at"] = dict(zip(axes_for(self.comp.name, key, len(idx)), idx))
            d["got"] = rep.got_value
            d["expected"] = rep.ref_value
            d["abs_err"] = abs(rep.got_value - rep.ref_value)
            d["rel_err"] = rep.rel_at_worst
        if not rep.problem.startswith("shape"):
            scale = max(1.0, float(np.max(np.abs(ref[np.isfinite(ref)])))) if np.size(ref) else 1.0
            d["tolerance"] = {"atol": rep.tol.atol, "rtol": rep.tol.rtol,
                              "rule": "|got - expected| <= atol * max(1, max|expected|) + rtol * "
                                      "|expected|",
                              "allowed_at_worst": rep.tol.atol * scale + rep.tol.rtol * abs(
                                  rep.ref_value) if np.isfinite(rep.ref_value) else None}
            d["ratio_to_tolerance"] = rep.ratio
            d["elements_over"] = rep.n_over
            d["elements"] = int(np.prod(rep.shape)) if rep.shape else 1
            d["max_abs_err"] = rep.max_abs
        if note:
            d["note"] = note
        return d

    @staticmethod
    def _headline(verdict: str, label: str, d: dict) -> str:
        if verdict == "wrong_shape":
            return f"{label}: wrong shape, got {tuple(d['got_shape'])}, expected {tuple(d['shape'])}"
        if verdict == "non_finite":
            return f"{label}: NaN/inf where the reference is finite ({d.get('problem', '')})"
        return (f"{label} differs from the reference: {d.get('elements_over')} of {d.get('elements')} "
                f"elements over tolerance, worst {d.get('ratio_to_tolerance', 0):.3g} x tolerance")

    # -- the search -------------------------------------------------------------------------------
    def run(self, replay: dict | None = None) -> CheckResult:
        t0 = time.perf_counter()
        bad = self._load()
        if bad is not None:
            return self._result(bad, None, t0)
        if replay is not None:
            out = self.evaluate(replay, determinism=True)
            self.examples_run = 1
            self._merge(out)
            return self._result(out, replay, t0)
        return self._search(t0)

    def _merge(self, out: Outcome) -> None:
        for k in out.available:
            if k not in self.available:
                self.available.append(k)
        for k in out.checked:
            if k not in self.checked:
                self.checked.append(k)
        for k, v in out.not_checked.items():
            self.not_checked.setdefault(k, v)
        if out.mapping and not self.mapping:
            self.mapping = out.mapping

    def _search(self, t0: float) -> CheckResult:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
        from hypothesis.errors import Flaky

        strategy = self.comp.strategy(self.fixed, self.opts.strict, self.adapter.caps)
        state: dict[str, Any] = {"fail": None, "fail_example": None, "stop": None,
                                 "stop_example": None}

        @settings(max_examples=self.opts.examples, deadline=None, database=None,
                  derandomize=False, print_blob=False, report_multiple_bugs=False,
                  verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
                  phases=(Phase.explicit, Phase.generate, Phase.shrink))
        @seed(self.opts.seed)
        @given(strategy)
        def prop(example):
            if state["stop"] is not None:
                return
            out = self.evaluate(example, determinism=self.examples_run == 0)
            self.examples_run += 1
            if out.ok:
                self._merge(out)
                return
            if out.verdict in ("timeout", "interface_error", "oracle_error", "nondeterministic"):
                # not worth shrinking (or cannot be shrunk safely): stop the search here
                state["stop"], state["stop_example"] = out, example
                return
            state["fail"], state["fail_example"] = out, example
            raise _Stop(out.verdict)

        flaky = False
        try:
            prop()
        except _Stop:
            pass
        except Flaky:
            flaky = True
        except BaseException as exc:  # noqa: BLE001 - hypothesis ExceptionGroups and the like
            if state["fail"] is None and state["stop"] is None:
                return self._result(Outcome("oracle_error",
                                            message=f"the search failed: {exc!r}"), None, t0)
            flaky = type(exc).__name__ in ("FlakyFailure", "FlakyReplay", "Flaky")
        if state["stop"] is not None:
            return self._result(state["stop"], state["stop_example"], t0)
        if state["fail"] is not None:
            res = self._result(state["fail"], state["fail_example"], t0)
            if flaky:
                res.flaky = True
                res.notes.append("this failure did not reproduce reliably when replayed: the "
                                 "candidate may be nondeterministic")
            return res
        return self._result(Outcome(), None, t0)

    # -- result -----------------------------------------------------------------------------------
    def _result(self, out: Outcome, example: dict | None, t0: float) -> CheckResult:
        # what matched on the failing example too (the quantities compared before the failure)
        self._merge(out)
        code = VERDICTS[out.verdict][0]
        spec = self.candidate if isinstance(self.candidate, str) else (
            self.loaded.spec if self.loaded else repr(self.candidate))
        q = out.quantity
        res = CheckResult(
            verdict=out.verdict, exit_code=code, component=self.comp.name, candidate=spec,
            kind=self.adapter.kind if self.adapter else "",
            quantity=q, quantity_label=quantity_label(q) if q else None,
            quantity_group=Quantity(q, quantity_kind(q), "").group if q else None,
            message=out.message or VERDICTS[out.verdict][1], detail=out.detail,
            example=example, case=self._describe_case(out.case) if out.case is not None else {},
            mapping=list(self.mapping), checked=list(self.checked),
            not_checked=dict(self.not_checked), quantities=list(self.available),
            examples_run=self.examples_run,
            notes=list(dict.fromkeys(self.notes + out.notes)), traceback=out.traceback,
            printed=out.printed, options=self._options_dict(), versions=versions(),
            elapsed_s=round(time.perf_counter() - t0, 3))
        if example is not None and not out.ok:
            res.replay = self.replay_command(example)
        if out.verdict in ("mismatch",) and self.adapter is not None:
            res.notes.extend(self._hints(out))
        return res

    def _hints(self, out: Outcome) -> list[str]:
        hints = []
        if any(e.endswith("(by registration order)") for e in self.mapping):
            hints.append("some parameters were mapped by registration order: check the mapping "
                         "above, or name them with --map")
        if self.opts.weight_layout == "out_in" and out.quantity == "output" and \
                self.adapter.framework == "numpy" and self.comp.tree:
            hints.append("weights are handed over as (out_features, in_features), y = x @ W.T + b; "
                         "if the candidate computes x @ W with square W, try --weight-layout in_out")
        return hints

    def _describe_case(self, case: Case) -> dict:
        d: dict[str, Any] = {"hyperparameters": {k: v for k, v in case.hyper.items()
                                                 if not k.startswith("_")},
                             "inputs": {k: list(v.shape) for k, v in case.inputs.items()},
                             "upstream_gradient": list(case.dout.shape)}
        masks = {}
        for name, keep in case.masks.items():
            if keep is None:
                masks[name] = None
                continue
            given_ = keep[:, 0] if self.opts.mask_rank == 3 else keep
            shown = given_ if self.opts.mask_convention == "keep" else ~given_
            masks[name] = {"shape_given": list(given_.shape),
                           "convention": self.opts.mask_convention,
                           "keep": keep.astype(int).tolist(),
                           "as_given": shown.astype(int).tolist()
                           if self.opts.mask_convention != "additive" else "0 / -inf where keep is 0"}
            kind = (case.example.get(name) or {}).get("kind") if isinstance(case.example.get(name),
                                                                             dict) else None
            if kind:
                masks[name]["kind"] = kind
        if masks:
            d["masks"] = masks
        if case.absent:
            d["absent_parameters"] = sorted(case.absent)
        small = {k: v.tolist() for k, v in case.inputs.items() if v.size <= 24}
        if small:
            d["input_values"] = small
        return d

    def _options_dict(self) -> dict:
        o = asdict(self.opts)
        return o

    def replay_command(self, example: dict) -> str:
        ex = json.dumps(example, separators=(",", ":"), default=_json_default)
        if not isinstance(self.candidate, str):
            return (f"oracle.check({self.comp.name!r}, <candidate object>, "
                    f"replay=json.loads({ex!r}), ...same options)")
        o, d = self.opts, Options()
        parts = ["npformer-oracle", "check", self.comp.name, self.candidate]
        for flag, attr in (("--mask-convention", "mask_convention"), ("--mask-dtype", "mask_dtype"),
                           ("--mask-rank", "mask_rank"), ("--dtype", "dtype"),
                           ("--framework", "framework"), ("--weight-layout", "weight_layout"),
                           ("--timeout", "timeout")):
            if getattr(o, attr) != getattr(d, attr):
                parts += [flag, str(getattr(o, attr))]
        if o.strict:
            parts.append("--strict")
        if o.allow_unmapped:
            parts.append("--allow-unmapped")
        if not o.check_dtype:
            parts.append("--no-dtype-check")
        for k, v in o.name_map.items():
            parts += ["--map", f"{k}={v}"]
        for k, v in o.settings.items():
            parts += ["--set", f"{k}={v}"]
        if o.init_kwargs:
            parts += ["--init-kwargs", json.dumps(o.init_kwargs)]
        parts += ["--replay", ex]
        return " ".join(shlex.quote(p) for p in parts)


def check(component: str, candidate: Any, opts: Options | None = None, *, backward: Any = None,
          replay: dict | None = None, **option_fields) -> CheckResult:
    """Check `candidate` (a spec string or a Python object) as `component`; never raises for
    anything the candidate does. `option_fields` override fields of `opts` (Options)."""
    if opts is None:
        opts = Options(**option_fields)
    elif option_fields:
        opts = Options(**{**asdict(opts), **option_fields})
    try:
        return Checker(component, candidate, opts, backward).run(replay)
    except (ValueError, KeyError):
        # bad options (unknown component, bad --set...): the caller's mistake, not the candidate's
        raise
    except Exception as exc:  # noqa: BLE001 - the oracle must answer, whatever happened
        import traceback
        return CheckResult(verdict="oracle_error", exit_code=3, component=str(component),
                           candidate=str(candidate), message=f"oracle error: {exc!r}",
                           traceback=traceback.format_exc(), versions=versions())
