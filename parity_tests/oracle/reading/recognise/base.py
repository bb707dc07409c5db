"""What recognisers share: the MISSING marker, the context a constructor recogniser gets, and the
two shapes a registered recogniser has (ConstructorRecogniser, Probe)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

MISSING = object()
"""Returned by a recogniser that has nothing to offer."""


@dataclass
class BuildContext:
    """What a constructor recogniser may use: the candidate's module (for sibling classes), the
    framework, the hyperparameter order of the part being built, a way to build a sibling class, and
    the adapter's notes (the report says what the oracle guessed)."""

    module: Any
    framework: str
    order: tuple
    build: Callable[[Any, dict, tuple], Any]      # build(class, values, order) -> instance
    notes: list = field(default_factory=list)
    depth: int = 0
    target_name: str = ""                          # the class being built (its config's name)
    target_module: str = ""                        # and the module defining it
    dtype: str = "float64"                         # the dtype the examples are drawn in

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


class ConstructorRecogniser(Protocol):
    """`value(ctx, param, values)`: a value for a required constructor argument no hyperparameter
    name matched, or MISSING (registered in recognise/__init__.py, CONSTRUCTOR)."""

    def __call__(self, ctx: BuildContext, param: Any, values: dict) -> Any: ...


class Probe(Protocol):
    """`probe(adapter)`: run once when the adapter is prepared; it records what it found on the
    adapter (`adapter.caps`, a reading.findings.Findings; opts; notes) through public attributes
    only (registered in PROBES)."""

    def __call__(self, adapter: Any) -> None: ...
