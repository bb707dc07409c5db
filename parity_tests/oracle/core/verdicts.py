"""Verdicts, the per-example Outcome and the CheckResult the oracle hands back (plain data).

Every verdict has an exit status: 0 only for "match". A verdict is chosen by the parent alone; a
verdict name coming from a submission's worker is accepted only if it is a known FAILING one
(`failing_verdict`), so nothing a submission does can produce a match except matching.
"""
from __future__ import annotations

import platform
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .. import __version__
from ..components import Case

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
    "incomplete": (1, "something the assignment requires was not compared (a mask kind, "
                      "cross-attention, a parameter, the assignment's epsilon, a size, its mask "
                      "convention or norm order)"),
    "raised": (2, "the candidate raised an exception"),
    "wrong_type": (2, "the candidate returned something other than an array/tensor"),
    "timeout": (2, "a call did not finish within the time limit"),
    "crashed": (2, "the submission's process exited or died (os._exit, a signal, a resource limit)"),
    "forbidden_import": (2, "the submission imports a module the assignment forbids"),
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
    compared_as: dict = field(default_factory=dict)  # key -> how it was compared, when not as is

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
    compared_as: dict = field(default_factory=dict)  # key -> how it was compared, when not as is
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
    policy: dict = field(default_factory=dict)   # isolation, forbidden/seen imports, runs
    gaps: dict = field(default_factory=dict)     # what was not compared (completeness.find_gaps)
    required: list = field(default_factory=list)  # what the assignment required to be compared
    # after a failure, each other quantity group judged by a search of its own (groups.py)
    group_searches: dict = field(default_factory=dict)
    # the parent's own finding that a mismatch is of float32 rounding size (float32_tables.retry);
    # never read from notes, which carry the worker's words too
    float32_sized: bool = field(default=False, repr=False)

    @property
    def status(self) -> str:
        return {0: "pass", 1: "fail"}.get(self.exit_code, "error")

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["float32_sized"]
        d["status"] = self.status
        d["meaning"] = VERDICTS[self.verdict][1]
        return d


def failing_verdict(v: Any, fallback: str = "raised") -> str:
    """A verdict name reported by a worker, if it is a known failing one; else `fallback`."""
    return v if isinstance(v, str) and v in VERDICTS and VERDICTS[v][0] != 0 else fallback


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


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
