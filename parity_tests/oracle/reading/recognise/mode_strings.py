"""Recogniser: a forward's training switch held as a string, `forward(x, mode="train")` (the
cs231n style, `if mode == "train": ... else: ...`), `phase="test"`. Left at a default of "train"
every run compared the training computation (deterministic at dropout rate 0), and the inference
path, scaled by 1 - rate for instance, never ran.

Read from the signature and the function's text (nothing runs): an argument whose name is a
training switch's (recognise/training_switch) or holds a word for a mode (`mode`, `phase`,
`stage`, `split`, `state`), whose default is a string naming training (`train`, `training`) or
inference (`eval`, `test`, `inference`, `predict`, `val`, ...). Its inference value is the default
where that names inference, else the first such string the function's body holds (the one its
test compares with), else "eval"; its training value alike. Every run passes the inference value,
the train mode the training one.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

from ..name_words import snake

MODE_WORDS = ("mode", "phase", "stage", "split", "state")
TRAIN_STRINGS = ("train", "training", "fit")
EVAL_STRINGS = ("eval", "evaluation", "evaluate", "test", "testing", "inference", "infer",
                "predict", "prediction", "val", "valid", "validation")


def _strings(fn) -> list[str]:
    """The string constants of the function's body (not its defaults), in order; [] when it cannot
    be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return []
    top = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else None
    return [] if top is None else [n.value for stmt in top.body for n in ast.walk(stmt)
                                   if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def string_switches(fn, is_switch) -> dict[str, tuple[str, str]]:
    """{argument: (its inference value, its training value)} for each string-valued training switch
    of `fn`; `is_switch(name)`: whether the name reads as a training switch by its words."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    out: dict[str, tuple[str, str]] = {}
    text = None
    for p in sig.parameters.values():
        d = p.default
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or not isinstance(d, str) or \
                d.lower() not in TRAIN_STRINGS + EVAL_STRINGS:
            continue
        if not (is_switch(p.name) or any(w in MODE_WORDS for w in snake(p.name).split("_"))):
            continue
        text = _strings(fn) if text is None else text
        seen_eval = next((s for s in text if s.lower() in EVAL_STRINGS), "eval")
        seen_train = next((s for s in text if s.lower() in TRAIN_STRINGS), "train")
        out[p.name] = (d, seen_train) if d.lower() in EVAL_STRINGS else (seen_eval, d)
    return out
