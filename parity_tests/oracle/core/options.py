"""What changes how a candidate is called or judged (the CLI's flags), and the exception for
something a candidate did that has a verdict of its own."""
from __future__ import annotations

from dataclasses import dataclass, field

DECLARABLE = ("mask_convention", "mask_dtype", "mask_rank")
"""Options the oracle adapts to what a submission appears to read while they hold their defaults
(reading/recognise/: an additive mask, a flipped padding part, three axes); an instructor who sets
one (a spec's options table, an explicit flag) fixes it: the submission is called as declared."""


class CandidateProblem(Exception):
    """Something the candidate did that has a verdict of its own (mutation, wrong type...)."""

    def __init__(self, verdict: str, message: str, quantity: str | None = None):
        super().__init__(message)
        self.verdict = verdict
        self.message = message
        self.quantity = quantity


@dataclass
class Options:
    """Everything that changes how a candidate is called or judged (the CLI's flags)."""

    mask_convention: str = "keep"       # keep | drop | additive
    mask_dtype: str = "bool"            # bool | int | float
    mask_rank: int = 4                  # 4: (B, 1, Tq, Tk); 3: (B, Tq, Tk)
    # mask dtypes the assignment also accepts: every masked example also runs with its masks in one
    # of them (the mask_dtype mode, sandbox/layout_modes.py)
    mask_dtypes_also: tuple = ()
    strict: bool = False                # include fully masked query rows, expect zeros
    examples: int = 25
    seed: int = 0
    shrink: bool = True                 # False: a failure is reported as first drawn, not minimised
    dtype: str = "float64"
    # judged at this dtype's tolerances (None: dtype's): float32_tables.retry runs a float64 search
    # at float32 tolerances before it trusts a float32 re-check
    tolerance_dtype: str | None = None
    timeout: float = 20.0
    time_budget: float | None = 300.0   # seconds for the whole search (None: unlimited)
    framework: str = "auto"             # auto | torch | numpy
    weight_layout: str = "out_in"       # out_in | in_out, for square bare matrices
    name_map: dict = field(default_factory=dict)
    init_kwargs: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)   # --set: fixed hyperparameters / bounds
    allow_unmapped: bool = False
    check_dtype: bool = True
    adapter_path: str | None = None     # --adapter FILE: hooks to build, call and read the candidate
    package_root: str | None = None     # --package-root DIR: how far up `from ..x` imports may reach
    declared: tuple = ()                # mask options the instructor fixed (DECLARABLE): never adapted

    def judged_at(self) -> str:
        """The dtype whose tolerances every comparison uses."""
        return self.tolerance_dtype or self.dtype

    def held(self) -> dict:
        """{option: value} for the mask options fixed by the instructor."""
        return {k: getattr(self, k) for k in self.declared}

    def validate(self) -> None:
        def need(ok, what, expected, got):
            if not ok:
                raise ValueError(f"{what}: expected {expected}, got {got!r}")
        need(self.mask_convention in ("keep", "drop", "additive"), "--mask-convention",
             "keep, drop or additive", self.mask_convention)
        need(self.mask_dtype in ("bool", "int", "float"), "--mask-dtype", "bool, int or float",
             self.mask_dtype)
        need(self.mask_rank in (3, 4), "--mask-rank", "3 or 4", self.mask_rank)
        need(isinstance(self.mask_dtypes_also, (tuple, list)) and set(self.mask_dtypes_also) <=
             {"bool", "int", "float"}, "--also-mask-dtype", "bool, int or float", self.mask_dtypes_also)
        need(isinstance(self.declared, (tuple, list)) and set(self.declared) <= set(DECLARABLE),
             "declared", f"a list of option names among {DECLARABLE}", self.declared)
        need(self.dtype in ("float32", "float64"), "--dtype", "float32 or float64", self.dtype)
        need(self.tolerance_dtype in (None, "float32", "float64"), "tolerance_dtype",
             "None, float32 or float64", self.tolerance_dtype)
        need(self.framework in ("auto", "torch", "numpy"), "--framework", "auto, torch or numpy",
             self.framework)
        need(self.weight_layout in ("out_in", "in_out"), "--weight-layout", "out_in or in_out",
             self.weight_layout)
        need(isinstance(self.examples, int) and self.examples >= 1, "--examples", "a positive int",
             self.examples)
        need(isinstance(self.shrink, bool), "shrink", "True or False", self.shrink)
        need(self.adapter_path is None or (isinstance(self.adapter_path, str)
                                           and self.adapter_path.endswith(".py")),
             "--adapter", "a .py file of hooks", self.adapter_path)
        if self.adapter_path is not None:
            import os
            need(os.path.isfile(self.adapter_path), "--adapter", "an existing .py file",
                 self.adapter_path)
        if self.package_root is not None:
            import os
            need(isinstance(self.package_root, str) and os.path.isdir(self.package_root),
                 "--package-root", "an existing folder", self.package_root)
        need(self.timeout is None or self.timeout > 0, "--timeout", "a positive number of seconds",
             self.timeout)
        need(self.time_budget is None or (isinstance(self.time_budget, (int, float))
                                          and self.time_budget > 0),
             "--time-budget", "a positive number of seconds", self.time_budget)
