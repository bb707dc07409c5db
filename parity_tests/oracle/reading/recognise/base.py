"""What recognisers share: the MISSING marker, the context a constructor recogniser gets, the
two shapes a registered recogniser has (ConstructorRecogniser, Probe), and Hooks, the named
entries of one kind that the registry hands to the rest of the oracle."""
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
    component: str = ""                            # the component checked (decoder_layer, ...)
    target: Any = None                             # the class or factory being built

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


class Hooks:
    """The registry's entries of one kind ("forward", "resolve", ...): named callables and constants,
    read as attributes. Code outside recognise/ reaches recognisers only through these."""

    def __init__(self, kind: str, **entries: Any):
        self.kind = kind
        self.entries = dict(entries)

    def __getattr__(self, name: str) -> Any:
        entries = self.__dict__.get("entries", {})
        if name in entries:
            return entries[name]
        raise AttributeError(f"recognise hooks of kind {self.__dict__.get('kind')!r} have no {name!r}; "
                             f"expected one of {sorted(entries)}")
