"""What one example's run holds: the constructed candidate (Instance) and what it produced (Produced)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import naming


@dataclass
class Instance:
    """One constructed candidate for one example."""

    call: Any                                  # what to call for forward
    obj: Any                                   # the module object (None for functions)
    entries: dict[str, naming.Entry]
    slots: dict[str, Any]
    binding: naming.Binding
    unclaimed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    table: bool = False                        # positional table function


@dataclass
class Produced:
    values: dict[str, np.ndarray] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)     # per-quantity remarks (e.g. no grad)
    weights_averaged: bool = False
