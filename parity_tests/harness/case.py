"""The case under test, so a failure message can say how to reproduce it.

A test (or the oracle) states what it drew with `note_case(...)` or `with case(...)`; `compare` puts
that description and a re-run command into every failure message. Hypothesis prints its own
"Falsifying example" and, with `print_blob=True` (set in every profile of `profiles.py`), an
`@reproduce_failure(...)` line to paste above the test.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from typing import Any, Iterator

import numpy as np

_CASE: contextvars.ContextVar[dict | None] = contextvars.ContextVar("parity_case", default=None)

PROFILE_ENV = "NPFORMER_HYPOTHESIS_PROFILE"


def summarize(value: Any, max_elements: int = 48) -> str:
    """A short, exact description of a drawn value (small arrays in full, large ones by shape)."""
    if isinstance(value, np.ndarray):
        if value.size <= max_elements:
            body = np.array2string(value, separator=",", threshold=max_elements,
                                   max_line_width=10_000).replace("\n", "")
            return f"array({body}, dtype={value.dtype})"
        return f"<array shape={value.shape} dtype={value.dtype}>"
    if hasattr(value, "detach") and hasattr(value, "shape"):  # a torch tensor, without importing torch
        return f"<tensor shape={tuple(value.shape)} dtype={value.dtype}>"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={summarize(v, max_elements)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)) and len(value) <= max_elements:
        inner = ", ".join(summarize(v, max_elements) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


def _example_id():
    """Identity of the running Hypothesis example (None outside one): a new example starts a new
    case description, so fields noted by an earlier example or test never leak into a message."""
    try:
        from hypothesis.control import _current_build_context
        ctx = _current_build_context.value
    except Exception:  # noqa: BLE001 - hypothesis missing or its internals moved: no scoping
        return None
    return None if ctx is None else id(ctx)


_OWNER: contextvars.ContextVar = contextvars.ContextVar("parity_case_owner", default=None)


def current_case() -> dict:
    """What the running test (or Hypothesis example) said it drew (empty when nothing was noted)."""
    if _OWNER.get() != _example_id():
        return {}
    return dict(_CASE.get() or {})


def note_case(**fields: Any) -> None:
    """Add fields to the current case description (and to Hypothesis' notes when inside a test)."""
    merged = current_case()
    merged.update(fields)
    _CASE.set(merged)
    _OWNER.set(_example_id())
    try:  # hypothesis is optional for users of the harness; note() only works inside a given-test
        from hypothesis import note
        note("case: " + ", ".join(f"{k}={summarize(v)}" for k, v in fields.items()))
    except Exception:  # noqa: BLE001 - outside a Hypothesis test there is nothing to note into
        pass


def clear_case() -> None:
    _CASE.set(None)
    _OWNER.set(None)


@contextlib.contextmanager
def case(**fields: Any) -> Iterator[dict]:
    """`with case(seed=3, config=cfg): ...`: describe the case for the duration of the block."""
    token = _CASE.set({**current_case(), **fields})
    owner = _OWNER.set(_example_id())
    try:
        yield _CASE.get()
    finally:
        _CASE.reset(token)
        _OWNER.reset(owner)


def reproduce_hint() -> str:
    """How to re-run the failing case: the pytest node and profile, plus Hypothesis' own lines."""
    node = os.environ.get("PYTEST_CURRENT_TEST", "")
    node = node.rsplit(" (", 1)[0] if node else ""
    profile = os.environ.get(PROFILE_ENV, "<default>")
    if node:
        cmd = f"{PROFILE_ENV}={profile} python -m pytest '{node}'"
        return (f"re-run: {cmd}  (Hypothesis prints the shrunk falsifying example and an "
                f"@reproduce_failure line; ci profile is derandomized, so the same command "
                f"replays the same examples)")
    return "re-run the same call with the case above (seed and shapes determine every array)"
