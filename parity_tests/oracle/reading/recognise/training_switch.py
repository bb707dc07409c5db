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

A switch may also say the opposite: `deterministic=True` (Flax's spelling), `inference=False`,
`no_dropout=False` turn dropout off when on, and `stochastic=False` turns it on when on. A name whose
words hold a word for not training (`deterministic`, `eval`, `inference`, ...) or a negation (`no`,
`disable`, ...) has the opposite sense (two negations cancel); such a switch, or a training switch
off by default (`stochastic=False`, `use_dropout=False`), is read whatever its bool default:
every run passes it its inference value (`deterministic=True`), the train mode the other one.
"""
from __future__ import annotations

import inspect

from ..name_words import snake
from ..signatures import CALL_FLAGS
from .mode_strings import string_switches

ON_WORDS = ("train", "training", "dropout", "stochastic")
"""Words that name what the switch turns on."""

OFF_WORDS = ("deterministic", "eval", "evaluation", "inference", "infer", "test", "testing")
"""Words that name the state without dropout: the switch turns training off."""

NEGATIONS = ("no", "not", "disable", "disabled", "without", "skip", "off")
"""Words that turn a switch's sense around (`no_dropout`, `disable_dropout`)."""

FILLER = ("is", "in", "mode", "flag", "do", "use", "apply", "with", "enable", "enabled", "during",
          "on", "phase", "now", "state")
"""Words beside them that only ask whether it is on (`is_training`, `train_mode`, `use_dropout`)."""


def switch_sense(name: str) -> bool | None:
    """True where `name` reads as a switch that turns training (dropout) on, False where it reads as
    one that turns it off (`deterministic`, `no_dropout`), None where it is no switch."""
    words = [w for w in snake(name).split("_") if w]
    on, off = any(w in ON_WORDS for w in words), any(w in OFF_WORDS for w in words)
    if on == off or not all(w in ON_WORDS or w in OFF_WORDS or w in FILLER or w in NEGATIONS
                            for w in words):
        return None
    return on != (sum(w in NEGATIONS for w in words) % 2 == 1)


def is_switch_name(name: str) -> bool:
    """Whether `name` reads as a training or dropout switch (see the module docstring)."""
    return switch_sense(name) is not None


def _truthy(default) -> bool:
    return (isinstance(default, bool) and default) or \
        (type(default) is int and default == 1)


def inference_value(name: str, default) -> bool | None:
    """The value that switches the argument `name` (with this default) to inference; None where it
    is not read as a switch: a training switch defaulting to on (True, 1) is passed False, as are
    one defaulting to False and every switch of the opposite sense holding a bool (passed True)."""
    sense = switch_sense(name)
    if sense is None or not (_truthy(default) or isinstance(default, bool)):
        return None
    return not sense


def switches(fn) -> dict[str, bool]:
    """{argument read as a training switch: the value that switches it to inference}."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    return {p.name: v for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and (v := inference_value(p.name, p.default)) is not None}


def constants(adapter, fn, given: dict | None) -> dict | None:
    """naming.bind's `constants` (`given`) with each training switch passed its inference value (a
    string one's too: recognise/mode_strings); the notes say so, and the adapter keeps their names
    (training_switches) for the one-value line, those values (switch_inference) and the training
    ones (switch_training) for the train mode, which passes them."""
    found = {n: v for n, v in switches(fn).items() if n.lower() not in CALL_FLAGS}
    strings = string_switches(fn, is_switch_name)
    if not found and not strings:
        return given
    adapter.training_switches = (*found, *strings)
    adapter.switch_inference = {**found, **{n: v[0] for n, v in strings.items()}}
    adapter.switch_training = {**{n: not v for n, v in found.items()},
                               **{n: v[1] for n, v in strings.items()}}
    for name, value in adapter.switch_inference.items():
        default = inspect.signature(fn).parameters[name].default
        said = "defaults to on" if value is False and _truthy(default) else \
            f"is a training switch ({'on' if value is False else 'off'} when training)" \
            if isinstance(value, bool) else "is a training switch held as a string"
        note = (f"forward argument {name!r} {said}: passed {value!r}, as the reference is compared "
                f"in inference mode (as eval() is called on a module); the train mode passes it "
                f"{adapter.switch_training[name]!r}")
        if note not in adapter.notes:
            adapter.notes.append(note)
    return {**(given or {}), **adapter.switch_inference}
