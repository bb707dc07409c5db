"""The oracle's public entry: `check(component, candidate, ...)` builds the search (runner.Checker)
and answers with a CheckResult whatever the candidate does; only a caller's own mistake (an unknown
component, a bad option) raises.
"""
from __future__ import annotations

import time
from dataclasses import asdict, replace
from typing import Any

from ..components import get
from ..reading.adapters import Options
from ..reading.loader import LoadError, split_spec
from ..sandbox import policy
from ..sandbox.limits import Limits
from . import float32_tables, groups, layout_retry
from .runner import Checker
from .verdicts import CheckResult, versions


def check(component: str, candidate: Any, opts: Options | None = None, *, backward: Any = None,
          replay: dict | None = None, forbid_import=policy.DEFAULT_FORBIDDEN, allow_import=(),
          runs: int = 2, limits: Limits | None = None, threads: int | None = None,
          require_gradients: bool = False, require=(), score_groups: bool = False,
          salt: int | None = None, **option_fields) -> CheckResult:
    """Check `candidate` (a spec string, run in its own worker process, or a Python object, run
    here) as `component`; never raises for anything the candidate does. `option_fields` override
    fields of `opts` (Options); forbid_import/allow_import: module policy (sandbox/policy.py);
    runs: calls per example (>= 2 catches nondeterminism); limits: the worker's resource limits;
    require_gradients: a match needs every input and parameter gradient compared; require: the
    completeness requirements a match needs (completeness.REQUIREMENTS; grading uses them all);
    score_groups: after a failure, judge every other quantity group by a search of its own
    (groups.py; what Gradescope results score per group); salt: the secret mixed into the drawn
    values (an int; default: a new random one per search; grading/secret.py derives a fixed one
    from a course's --secret-file)."""
    if salt is not None and (not isinstance(salt, int) or isinstance(salt, bool)
                             or not 0 <= salt < 1 << 64):
        raise ValueError(f"salt: expected None or an integer in [0, 2**64), got {salt!r}")
    component = get(component).name         # a common spelling -> the canonical name
    if isinstance(candidate, str) and ":" not in candidate:
        # no worker for a spec without `:Name`: the file is read here as text (ast, nothing
        # imported) to name what it defines, which a worker, shown no folder, could not
        try:
            split_spec(candidate)
        except LoadError as e:
            return CheckResult(verdict="load_error", exit_code=2, component=component,
                               candidate=candidate, message=str(e), versions=versions())
    if opts is None:
        opts = Options(**option_fields)
    elif option_fields:
        opts = Options(**{**asdict(opts), **option_fields})
    try:
        def run(o: Options, replay=replay, only=None, scale=1.0) -> CheckResult:
            c = Checker(component, candidate, o, backward, forbid_import, allow_import, runs,
                        limits, threads, require_gradients and not only, () if only else require)
            c.judge.only = only
            c.salt, c.input_scale = salt, scale
            return c.run(replay)
        start = time.perf_counter()
        res, used = run(opts), opts

        def again(o: Options, **kw) -> CheckResult:  # --time-budget covers every later search
            if o.time_budget is None:
                return run(o, **kw)
            left = o.time_budget - (time.perf_counter() - start)
            if left < 1.0:
                return CheckResult(verdict="timeout", exit_code=2, component=str(component),
                                   candidate=str(candidate), message="no time left (--time-budget)")
            return run(replace(o, time_budget=left), **kw)
        if replay is None:                   # a model's square matrices used as x @ W
            res, used = layout_retry.retry(component, res, opts, again)
        if replay is None and not require:   # a quick check: float32-sized mismatches rerun
            layout_note = res.notes[:1] if used is not opts else []
            res = float32_tables.retry(component, res, used, again,
                                       has_eps="eps" in getattr(get(component), "settable", {}))
            res.notes[:0] = [n for n in layout_note if n not in res.notes]
        if score_groups and replay is None:
            res.group_searches = groups.follow_up(res, lambda only: again(used, only=only))
        return res
    except (ValueError, KeyError):
        # bad options (unknown component, bad --set...): the caller's mistake, not the candidate's
        raise
    except Exception as exc:  # noqa: BLE001 - the oracle must answer, whatever happened
        import traceback
        return CheckResult(verdict="oracle_error", exit_code=3, component=str(component),
                           candidate=str(candidate), message=f"oracle error: {exc!r}",
                           traceback=traceback.format_exc(), versions=versions())
