"""The search: Hypothesis draws examples in the parent, the submission runs in its own worker
process on each (sandbox/), the reference and every comparison run here (judge.py); the first
quantity that differs stops the search and Hypothesis shrinks the example to a minimal one.

    result = check("mha", "student.py:MultiHeadAttention", Options(mask_convention="keep"))
    result.verdict      # "match", "mismatch", ... (verdicts.VERDICTS)
    result.exit_code    # 0 match, 1 the candidate computes something else, 2 cannot load/call it

Every example is run `runs` times (default 2) in the worker, each with a fresh instance and fresh,
unpredictable global RNG states (random, numpy.random, torch); outputs that differ between runs are
`nondeterministic`. A worker that exits, dies or hangs gives `crashed` / `timeout`, never a match.
"""
from __future__ import annotations

import os
import time
from typing import Any

from ..components import Case, Component, get, neutral_value, scores
from ..reading.adapters import Options
from ..reading.findings import Findings
from ..sandbox import policy
from ..sandbox.limits import Limits
from ..sandbox.modes import flipped_flag
from . import float32_tables, upstream, weight_styles
from .completeness import ONE_VALUE, find_gaps, requirements, ungraded, unread_gradients
from .diagnose import flip_untried, likely_causes
from .inference import last_runs
from .judge import Judge, nondeterminism
from .loading import LoadMixin
from .modes import mode_reference
from .result_view import ResultMixin
from .verdicts import AXES, VERDICTS, CheckResult, Outcome, _json_default, axes_for, versions  # noqa: F401


class _Stop(Exception):
    """Raised inside the Hypothesis test to mark an example as failing."""


STOP_VERDICTS = ("timeout", "crashed", "interface_error", "oracle_error", "nondeterministic",
                 "forbidden_import", "load_error")


class Checker(ResultMixin, LoadMixin):
    def __init__(self, component: str | Component, candidate: Any, opts: Options | None = None,
                 backward: Any = None, forbid_import=policy.DEFAULT_FORBIDDEN, allow_import=(),
                 runs: int = 2, limits: Limits | None = None, threads: int | None = None,
                 require_gradients: bool = False, require=()):
        self.require = requirements(tuple(require) + (("gradients",) if require_gradients else ()))
        self.require_gradients = "gradients" in self.require
        self.absent_seen, self.passed, self.gaps = set(), [], {}   # passed: the cases that matched
        self.opts = opts or Options()
        self.opts.validate()
        self.t0 = time.perf_counter()
        if self.opts.adapter_path:   # the worker's working directory is its scratch folder
            self.opts.adapter_path = os.path.abspath(self.opts.adapter_path)
        self.comp = get(component) if isinstance(component, str) else component
        self.candidate = candidate
        self.backward = backward
        if not isinstance(runs, int) or runs < 1:
            raise ValueError(f"runs: expected an integer >= 1, got {runs!r}")
        self.runs = runs
        self.mismatch_repeated = runs < 2       # runs=1: no repeated calls wanted (_unrepeatable)
        self.forbidden = [m for m in dict.fromkeys(forbid_import) if m not in set(allow_import)]
        self.limits, self.threads = limits, threads
        self.backend = None
        self.caps = Findings()
        self.kind = self.framework = ""
        self.examples_run = 0
        self.input_scale = 1.0          # float32_tables.retry's replay at a small scale
        self.one_value: dict[str, set] = {}   # values drawn of completeness.ONE_VALUE's options
        self.unvaried: dict[str, str] = {}    # forward arguments no run varied (reading/unvaried)
        self.exercised: set[str] = set()      # of those, the ones a mode did vary after all
        self.masks_drawn = False
        self.last_example: dict | None = None
        self.checked: list[str] = []
        self.compared_as: dict[str, str] = {}
        self.not_checked: dict[str, str] = {}
        self.notes: list[str] = []
        self.mapping: list[str] = []
        self.available: list[str] = []
        self.scan: dict = {}
        self.fixed = self._parse_settings()
        self.judge = Judge(self.comp, self.opts)

    # -- one example ------------------------------------------------------------------------------
    def evaluate(self, example: dict, drawn: bool = True) -> Outcome:
        """`drawn`: an example of this check's search, whose array seed is mixed with the check's
        secret (upstream.secret_seed); a replayed one (`--replay`) is run exactly as given."""
        comp = self.comp
        if drawn:
            example = upstream.secret_seed(example, getattr(self.backend, "salt", 0))
        self.last_example = example        # what the report shows and the replay command repeats
        try:
            case = comp.build(example, self.opts.dtype, self.caps)
            if example.get(scores.MARK):        # core/large_scores.py: scores of ~3000
                case = scores.tuned(comp, case)
            else:                               # weights as a framework initialises them, at times
                case = weight_styles.restyled(case, self.opts.dtype)
            case = float32_tables.scaled_case(case, self.input_scale, self.opts.dtype)
            case = upstream.mixed(case, self.opts.dtype)
            for k in ONE_VALUE:
                if k in case.hyper:
                    self.one_value.setdefault(k, set()).add(case.hyper[k])
            self.masks_drawn |= any(m is not None for m in case.masks.values())
        except Exception as exc:  # noqa: BLE001
            return Outcome("oracle_error", message=f"building the example failed: {exc!r}")
        rep = self.backend.run(case, self.runs)
        bad = self._policy()
        if bad is not None:
            bad.case = case
            return bad
        if isinstance(rep, Outcome):
            return rep
        for ref in rep.absent:
            case.params[ref] = neutral_value(ref, case.params[ref].shape)
            case.absent.add(ref)
            self.absent_seen.add(ref)
        for k, v in rep.unvaried.items():
            self.unvaried.setdefault(k, v)
        if rep.modes.get("causal_flag"):        # is_causal=True compared (sandbox/modes.causal_flag)
            self.exercised.add("is_causal")
        for mode in ("causal_ctor", "bias_ctor"):
            flag = flipped_flag(mode, rep.unvaried) if rep.modes.get(mode) else None
            if flag is not None:                # that constructor flag compared at its other value
                self.exercised.add(flag)
        for n in rep.adapter_notes:      # notes made while building/calling (late ones too)
            if n not in self.notes:
                self.notes.append(n)
        try:
            ref_vals = comp.reference(case)
            mode_ref = {m: mode_reference(comp, m, c)
                        for m, c in rep.mode_cases.items()
                        if rep.modes.get(m)} if rep.modes and rep.mode_cases else None
        except Exception as exc:  # noqa: BLE001
            return Outcome("oracle_error", message=f"the reference failed on this example: {exc!r}",
                           case=case)
        nd = nondeterminism(rep, case, rep.mapping)
        if nd is not None:
            return nd
        out = self.judge.compare(rep, ref_vals, case, rep.mapping, mode_ref)
        if out.verdict == "mismatch" and not self.mismatch_repeated:
            self.mismatch_repeated = True       # once a check: shrinking does not pay for it again
            nd = self._unrepeatable(case, rep)
            if nd is not None:
                return nd
        if out.verdict in ("mismatch", "non_finite") and out.quantity == "output":
            causes = likely_causes(comp, case, rep.values.get("output"), self.opts.dtype,
                                   over=not out.detail.get("mode"), probed_norm=bool(self.caps.norm_first)
                                   and "norm_first" not in (self.opts.settings or {}))
            if causes:
                out.notes.append("likely cause: your output equals the reference with "
                                 + " / ".join(causes) + " (a hint from re-computing this "
                                 "example with known mistakes; the verdict stands)")
            elif flip_untried(case) and self._mask_as_default():
                out.notes.append("the mask convention was not tried flipped on this example (flipped, "
                                 "a row of its mask would hide every key): if the candidate's masks "
                                 "are True where a key is HIDDEN, check again with "
                                 "--mask-convention drop")
        return out

    def _unrepeatable(self, case: Case, rep) -> Outcome | None:
        """The first mismatching example run once more: a candidate whose output changes between
        calls is nondeterministic (a random part that no flag turns off), even where a tiny
        example's repeats happened to agree."""
        again = self.backend.run(case, self.runs)
        if isinstance(again, Outcome):
            return None
        rep.again.append(dict(again.values))
        return nondeterminism(rep, case, rep.mapping) or nondeterminism(again, case, rep.mapping)

    def _mask_as_default(self) -> bool:
        """Whether masks are handed over as the defaults say, neither given, declared nor changed
        by a recogniser (each says so in a note naming the mask)."""
        o = self.opts
        return (o.mask_convention, o.mask_dtype) == ("keep", "bool") and \
            not set(getattr(o, "declared", ()) or ()) & {"mask_convention", "mask_dtype"} and \
            not any("mask" in n and not n.startswith("compared at one value") for n in self.notes)

    # -- the search -------------------------------------------------------------------------------
    def run(self, replay: dict | None = None) -> CheckResult:
        t0 = self.t0 = time.perf_counter()
        try:
            bad = self._load()
            if bad is not None:
                return self._result(bad, None, t0)
            if replay is not None:
                out = self.evaluate(replay, drawn=False)
                self.examples_run = 1
                self._merge(out)
                return self._result((last_runs(self) or out) if out.ok else out, replay, t0)
            return self._search(t0)
        finally:
            if self.backend is not None:
                self.backend.close()

    def _merge(self, out: Outcome) -> None:
        for mine, theirs in ((self.available, out.available), (self.checked, out.checked)):
            mine.extend(k for k in dict.fromkeys(theirs) if k not in mine)     # in order, once
        self.compared_as.update(out.compared_as)
        for k, v in out.not_checked.items():
            self.not_checked.setdefault(k, v)
        if out.mapping and not self.mapping:
            self.mapping = out.mapping
        self.passed.append(out.case)       # for the runs under inference mode (core/inference.py)

    def _search(self, t0: float) -> CheckResult:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
        from hypothesis.errors import Flaky

        strategy = self.comp.strategy(self.fixed, self.opts.strict, self.caps)
        state: dict[str, Any] = {"fail": None, "fail_example": None, "stop": None,
                                 "stop_example": None}

        @settings(max_examples=self.opts.examples, deadline=None, database=None,
                  derandomize=False, print_blob=False, report_multiple_bugs=False,
                  verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
                  phases=(Phase.explicit, Phase.generate) + ((Phase.shrink,) if self.opts.shrink else ()))
        @seed(self.opts.seed)
        @given(strategy)
        def prop(example):
            if state["stop"] is not None or self._out_of_time(state):
                return
            out = self.evaluate(example)
            self.examples_run += 1
            if out.ok:
                self._merge(out)
                return
            if out.verdict in STOP_VERDICTS:
                # not worth shrinking (or cannot be shrunk safely): stop the search here
                state["stop"], state["stop_example"] = out, self.last_example
                return
            state["fail"], state["fail_example"] = out, self.last_example
            raise _Stop(out.verdict)

        flaky = False
        try:
            prop()
            self._structural(state)
        except _Stop:
            pass
        except Flaky:
            flaky = True
        except BaseException as exc:  # noqa: BLE001 - hypothesis ExceptionGroups and the like
            if isinstance(exc, KeyboardInterrupt):
                raise
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
        return self._result(last_runs(self) or self._required(), None, t0)

    def _out_of_time(self, state: dict) -> bool:
        """Past --time-budget: no more calls; a failure found stands (as shrunk), else timeout."""
        budget = self.opts.time_budget
        if budget is None or time.perf_counter() - self.t0 <= budget:
            return False
        if state["fail"] is None and state["stop"] is None:
            state["stop"] = Outcome("timeout", message=(
                f"the check ran past its time budget of {budget:g} s (--time-budget) after "
                f"{self.examples_run} example(s) without a failure (each call: --timeout s)"))
        return True

    def _structural(self, state: dict) -> None:
        """After a random search that found nothing, the structural cases, on purpose
        (structural.py): a failure there is reported as drawn (not shrunk: all are small), so a
        difference the random search finds keeps its minimal counterexample."""
        from . import beyond_draws, large_scores, structural
        if state["fail"] is not None or state["stop"] is not None:
            return
        planned = structural.cases(self.comp, self.fixed, self.caps, self.opts.seed, self.opts.dtype)
        past = beyond_draws.stretched(self.comp, self.last_example, self.fixed, self.caps, self.opts.seed)
        large = large_scores.example(self.comp, self.last_example, self.fixed, self.caps,
                                     self.opts.seed, self.opts.dtype)
        for ex in planned + [e for e in (past, large) if e]:
            if self._out_of_time(state):
                return
            out = self.evaluate(ex)
            self.examples_run += 1
            if out.ok:
                self._merge(out)
                continue
            key = "stop" if out.verdict in STOP_VERDICTS else "fail"
            state[key], state[key + "_example"] = out, self.last_example
            return
        if planned:
            self.notes.append(structural.covered(self.comp, self.caps, len(planned)))
        if past:
            self.notes.append(beyond_draws.note(past))
        if large:
            self.notes.append(large_scores.note())

    def _required(self) -> Outcome:
        """A match, unless something the assignment requires was never compared (the gaps are
        found here, from what the parent drew and received, never from the worker's word)."""
        self.gaps = find_gaps(self.comp, self.caps, self.opts, self.not_checked, self.absent_seen,
                              quick=not self.require)
        due = [g for g in self.gaps if g in self.require]
        unread = unread_gradients(self.not_checked)
        if unread is not None:
            return Outcome("missing_gradient", quantity=unread[0], message=unread[1])
        if not due:
            return Outcome()
        if "gradients" in due:
            first = next(iter(ungraded(self.not_checked, self.absent_seen)))
            return Outcome("missing_gradient", quantity=first,
                           message="required by this assignment but not compared: "
                                   + " | ".join(self.gaps[g] for g in due))
        q = "output"
        if due == ["parameters"]:
            q = f"grad_param:{sorted(self.absent_seen)[0]}"
        return Outcome("incomplete", quantity=q, message="required by this assignment but not "
                       "compared: " + " | ".join(self.gaps[g] for g in due))
