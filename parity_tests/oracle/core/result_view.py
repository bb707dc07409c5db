"""The CheckResult a check ends with: verdict, what was compared and how, the worker's policy,
the gaps, the notes and hints a reader needs, and the command that replays the failing example.
A mixin of Checker (runner.py), which holds the state it reads."""
from __future__ import annotations

import time
from dataclasses import asdict

from ..components import Case, Quantity, quantity_kind, quantity_label
from . import float32_tables
from .completeness import find_gaps, one_value_line, reference_eps
from .describe import describe_case, replay_command
from .verdicts import VERDICTS, CheckResult, Outcome, versions


class ResultMixin:
    """Checker's methods that turn the last Outcome into a CheckResult."""

    # -- result -----------------------------------------------------------------------------------
    def _result(self, out: Outcome, example: dict | None, t0: float) -> CheckResult:
        self._merge(out)
        code = VERDICTS[out.verdict][0]
        q = out.quantity
        res = CheckResult(
            verdict=out.verdict, exit_code=code, component=self.comp.name,
            candidate=self.candidate if isinstance(self.candidate, str) else repr(self.candidate),
            kind=self.kind, quantity=q, quantity_label=quantity_label(q) if q else None,
            quantity_group=Quantity(q, quantity_kind(q), "").group if q else None,
            message=out.message or VERDICTS[out.verdict][1], detail=out.detail,
            example=example, case=self._describe_case(out.case) if out.case is not None else {},
            mapping=list(self.mapping), checked=list(self.checked),
            compared_as=dict(self.compared_as), not_checked=dict(self.not_checked), quantities=list(self.available),
            examples_run=self.examples_run,
            notes=list(dict.fromkeys(self.notes + out.notes)), traceback=out.traceback,
            printed=out.printed, options=self._options_dict(), versions=versions(),
            elapsed_s=round(time.perf_counter() - t0, 3))
        res.policy = self._policy_dict()
        if not self.gaps and self.backend is not None and self.kind:
            self.gaps = find_gaps(self.comp, self.caps, self.opts, self.not_checked,
                                  self.absent_seen, quick=not self.require)
        res.gaps, res.required = dict(self.gaps), list(self.require)
        eps = reference_eps(self.comp, self.caps, self.opts) if self.kind else None
        if eps is not None:
            res.notes.append(f"the reference's LayerNorm epsilon: {eps:g}")
        if self.examples_run:
            res.notes.append(one_value_line(self.opts.dtype, self.one_value,
                                            self.opts.mask_dtype if self.masks_drawn and
                                            not self.opts.mask_dtypes_also else None,
                                            {k: v for k, v in self.unvaried.items()
                                             if k not in self.exercised}))
        if example is not None and not out.ok:
            res.replay = self.replay_command(example)
        if out.verdict in ("mismatch",):
            res.notes.extend(hints := self._hints(out))
            res.float32_sized = any(float32_tables.HINT in h for h in hints)
        return res

    def _policy_dict(self) -> dict:
        be = self.backend
        return {"isolated": isinstance(self.candidate, str), "forbidden": list(self.forbidden),
                "imports_seen": sorted(getattr(be, "imports", ()) or ()),
                "imports_declared": self.scan.get("imports", []),
                "notable_calls": self.scan.get("notable_calls", []),
                **{k: self.scan.get(k, []) for k in ("names_internals", "reaches_into", "watches")},
                "violations": list(self.scan.get("violations", []))
                + list(getattr(be, "violations", []) or []),
                "runs_per_example": self.runs, "require_gradients": self.require_gradients,
                "required": list(self.require),
                "confinement": dict(getattr(getattr(be, "worker", None), "confinement", None)
                                    or {"namespaces": False, "landlock": 0, "not_started": True,
                                        "reason": "not isolated: no worker process"})}

    def _hints(self, out: Outcome) -> list[str]:
        hints = []
        if any(e.endswith("(by registration order)") for e in self.mapping):
            hints.append("some parameters were mapped by registration order: check the mapping "
                         "above, or name them with --map")
        switched = any(n.startswith("the candidate computes x @ W") for n in self.notes + out.notes)
        if self.opts.weight_layout == "out_in" and out.quantity == "output" and not switched and \
                self.framework == "numpy" and self.comp.tree:
            hints.append("weights are handed over as (out_features, in_features), y = x @ W.T + b; "
                         "if the candidate computes x @ W with square W, try --weight-layout in_out")
        d = out.detail or {}
        tol = d.get("tolerance") or {}
        allowed, err = tol.get("allowed_at_worst"), d.get("max_abs_err")
        if self.opts.dtype == "float64" and out.verdict == "mismatch" and allowed and err and \
                tol.get("atol", 0) + tol.get("rtol", 0) > 0:
            rel = float(err) / (float(allowed) / (tol["atol"] + tol["rtol"]))
            # float32 rounding is at most ~1e-7 of the output's scale, and can be far less: a float32
            # softmax's error is multiplied by the spread of the values it weights, so a shrunk case
            # (two keys, one feature) can show 5e-11. Float64 code that sums in another order
            # differs by ~1e-15; 1e-12 separates the two, and the float32 re-check decides
            if 1e-12 < rel < 2e-6:
                hints.append(f"the largest difference is within float32 rounding size ({rel:.1e} of the "
                             f"output's scale): does the candidate compute something in float32 "
                             f"(a table or buffer made with dtype=torch.float32 / np.float32)? "
                             f"Its logic may be right: compare with --dtype float32")
        return hints

    def _describe_case(self, case: Case) -> dict:
        return describe_case(case, self.opts)

    def _options_dict(self) -> dict:
        o = asdict(self.opts)
        return o

    def replay_command(self, example: dict) -> str:
        return replay_command(self.candidate, self.comp.name, self.opts, example)

