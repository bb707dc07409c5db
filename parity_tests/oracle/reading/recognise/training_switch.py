"""Recogniser: a forward's own training switch, `forward(X, training=True)`, `is_training=True`,
`train_mode=True`, `use_dropout=True`, that turns the code's dropout on unless told otherwise.
Left at its default the main run compared the training computation, and the verdict was
NONDETERMINISTIC even where nothing else was wrong.

The reference is compared in inference mode (the oracle calls a module's eval(), or sets a NumPy
object's `training` flag False), so such an argument is passed False, and the report says so. It is
read from the forward's signature (nothing runs): its default is truthy (True, 1) and its name, in
snake_case words, holds a word for training (`train`, `training`) or for dropout (`dropout`), every
other word being one that only says "is it on" (`is`, `in`, `mode`, `use`, `apply`, ...). A name
holding any other word (`train_steps`, `dropout_rate`) is not a switch.

The train mode (sandbox/modes) passes True to the names in signatures.TRAINING_FLAGS and to every
switch read here (the adapter's training_switches), so a training path wrong only with the switch
on (a dropout at a rate of its own under `use_dropout`) fails there, and the eval_rate mode passes
False with a dropout rate of 0.5. Code whose dropout stays on with the switch False (a part built at a rate of
its own that never receives it) is still nondeterministic, and fails.
"""
from __future__ import annotations

import inspect

from ..name_words import snake

ON_WORDS = ("train", "training", "dropout")
"""Words that name what the switch turns on."""

FILLER = ("is", "in", "mode", "flag", "do", "use", "apply", "with", "enable", "enabled", "during",
          "on", "phase", "now", "state")
"""Words beside them that only ask whether it is on (`is_training`, `train_mode`, `use_dropout`)."""


def is_switch_name(name: str) -> bool:
    """Whether `name` reads as a training or dropout switch (see the module docstring)."""
    words = [w for w in snake(name).split("_") if w]
    return any(w in ON_WORDS for w in words) and all(w in ON_WORDS or w in FILLER for w in words)


def _truthy(default) -> bool:
    return (isinstance(default, bool) and default) or \
        (type(default) is int and default == 1)


def switches(fn) -> list[str]:
    """The forward's arguments read as a training switch defaulting to a truthy value."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and _truthy(p.default)
            and is_switch_name(p.name)]


def constants(adapter, fn, given: dict | None) -> dict | None:
    """naming.bind's `constants` (`given`) with each training switch passed False; the notes say
    so, and the adapter keeps their names (training_switches) for the one-value line."""
    found = switches(fn)
    if not found:
        return given
    adapter.training_switches = tuple(found)
    for name in found:
        note = (f"forward argument {name!r} defaults to on: passed False, as the reference is "
                f"compared in inference mode (as eval() is called on a module); the train mode "
                f"passes it True")
        if note not in adapter.notes:
            adapter.notes.append(note)
    return {**(given or {}), **{n: False for n in found}}
