"""Setting a check up, a mixin of runner.Checker: the `--set` sizes validated, the submission
scanned by the import policy (in this process, never executed), its backend started (a worker of
its own, or this process for a Python object) and prepared, and the worker's forbidden imports
turned into the verdict."""
from __future__ import annotations

import os

from ..components.base import parse_settings
from ..sandbox import mask_claims, policy
from .backend import InProcessBackend, Prepared, SandboxBackend
from .project_hint import with_project_hints
from .verdicts import Outcome


class LoadMixin:
    """Checker's setup (runner.py): reads and sets the Checker's own attributes."""

    def _parse_settings(self) -> dict:
        fixed = parse_settings(self.comp, self.opts.settings)
        self.opts.settings = fixed
        return fixed

    # -- setup ------------------------------------------------------------------------------------
    def _load(self) -> Outcome | None:
        if isinstance(self.candidate, str):
            loc = self.candidate.rpartition(":")[0]
            first = loc.split(",")[0]
            if first.endswith(".py") and not os.path.isfile(first):
                return Outcome("load_error", message=f"the file {first!r} does not exist"
                               + (" (it is a folder)" if os.path.isdir(first) else ""))
            if loc.endswith(".py"):
                self.scan = policy.scan(loc, self.forbidden)
                if self.scan.get("unparsable"):
                    return Outcome("load_error", message="the submission cannot be read: "
                                   + self.scan["unparsable"])
                self._claimed_masks(loc, self.candidate.rpartition(":")[2])
            if self.opts.adapter_path:      # the adapter runs beside the submission: same policy
                extra = policy.scan(self.opts.adapter_path, self.forbidden)
                for key in ("imports", "notable_calls", "violations", "names_internals", "reaches_into",
                            "watches"):
                    have = self.scan.setdefault(key, [])
                    have.extend(x for x in extra.get(key, []) if x not in have)
            if self.scan.get("violations"):
                return Outcome("forbidden_import", message="the submission imports "
                               + ", ".join(self.scan["violations"]) + " (forbidden: "
                               + ", ".join(self.forbidden) + "; lift with --allow-import)")
            self.backend = SandboxBackend(self.candidate, self.comp, self.opts, self.forbidden,
                                          self.limits, self.threads)
        else:
            self.backend = InProcessBackend(self.candidate, self.backward, self.comp, self.opts)
            self.notes.append("a Python object was checked in the oracle's own process (not "
                              "isolated): give a 'file.py:Name' spec to isolate it")
        if getattr(self, "salt", None) is not None:   # a course's fixed secret (grading/secret.py)
            self.backend.salt = self.salt
        prep = self.backend.prepare()
        bad = self._policy()
        if bad is not None:
            return bad
        if isinstance(prep, Outcome):
            return prep
        assert isinstance(prep, Prepared)
        self.caps, self.kind, self.framework = prep.caps, prep.kind, prep.framework
        if "eps" in self.require and self.caps.norm_eps is not None:
            self.caps.norm_eps = None
            self.notes.append("the candidate's own LayerNorm epsilon was not used: the assignment "
                              "fixes it")
        # sizes the candidate's code fixes are drawn, but opts.settings stays what the user fixed:
        # a size only the code fixes is the gap `sizes` (completeness._code_sizes)
        self.fixed = {**self.fixed, **self.caps.fixed_sizes}
        if self.caps.one_sequence:     # code written for one (T, d) sequence at a time
            for key in ("max_batch", "max_heads"):
                if key in self.comp.settable:
                    self.fixed[key] = self.opts.settings[key] = 1
        notes = list(prep.notes)
        if isinstance(self.candidate, str) and self.candidate.rpartition(":")[0].endswith(".py"):
            notes = with_project_hints(notes, self.candidate.rpartition(":")[0].split(",")[0])
        self.notes.extend(notes)
        return None

    def _claimed_masks(self, path: str, entry: str) -> None:
        """Mask dtypes the submission's code says it takes, exercised (sandbox/mask_claims.py)."""
        if self.comp.name == "model" or not self.comp.masks:
            return
        names = [a for m in self.comp.masks for a in (m.name, *m.aliases)]
        note = mask_claims.widen(self.opts, mask_claims.claimed_mask_dtypes(path, entry, names))
        if note:
            self.notes.append(note)

    def _policy(self) -> Outcome | None:
        v = self.backend.violations if self.backend is not None else []
        if v:
            return Outcome("forbidden_import", message="the submission tried to import "
                           + ", ".join(v) + " (forbidden: " + ", ".join(self.forbidden) + ")")
        return None
