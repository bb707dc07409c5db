"""What recognisers share: the MISSING marker and the context a constructor recogniser gets."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

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

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
