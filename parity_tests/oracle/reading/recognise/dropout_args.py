"""Recogniser: a constructor argument that is a dropout rate under a name that does not say so
(`p_d`, `pd`, `rate_attn`): the oracle builds every candidate with its dropout rates at 0, and a
rate it could not name kept the candidate's default (0.1), so the train() run differed from the
eval() one and correct code was called MISMATCH ("a dropout at a rate of its own").

Read from the constructor's text, never run: an argument handed to a dropout in the constructor
(`nn.Dropout(p_d)`, `Dropout(p=p_d)`, `torch.nn.Dropout(rate)`, any callee whose name holds
`dropout`: its first positional argument, or a keyword naming a rate; never `rng=`, `seed=`) is a
dropout rate, and is given 0.0 like every named one; each is a note. Arguments whose names already
say what they are (hyperparameters, `dropout`-like names) are left to those rules; a rate fixed in
the code (`nn.Dropout(0.1)`) is still the candidate's own and still shows.

A rate defaulting to None that the constructor hands to a dropout all the same (`def __init__(self,
d, h, dropout: float = None): self.drop = nn.Dropout(dropout)`, which raises unless a number is
passed) gets 0.0 too (`none_rates`); a None default the constructor does not hand to a dropout (an
optional dropout MODULE, `dropout=None`) keeps its None.
"""
from __future__ import annotations

import ast
import inspect
import textwrap


def _callee(node: ast.Call) -> str:
    f = node.func
    return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")).lower()


def dropout_fed(target) -> set[str]:
    """Names of `target`'s constructor arguments that its constructor hands to a dropout."""
    fn = target.__init__ if isinstance(target, type) else target
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return set()
    top = tree.body[0] if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else None
    if top is None:
        return set()
    args = {a.arg for a in top.args.args + top.args.kwonlyargs} - {"self", "cls"}
    fed: set[str] = set()
    for node in ast.walk(top):
        if isinstance(node, ast.Call) and "dropout" in _callee(node):
            given = list(node.args[:1]) + [k.value for k in node.keywords if _rate_keyword(k.arg)]
            fed |= {g.id for g in given if isinstance(g, ast.Name) and g.id in args}
    return fed


def _rate_keyword(name: str | None) -> bool:
    """Whether a dropout's keyword argument is its rate (`p=`, `rate=`, `drop_prob=`), not its
    random generator, seed or in-place switch (`Dropout(rate, rng=rng)`: the rate is the first
    positional argument, never the second)."""
    n = (name or "").lower()
    return n in ("p", "rate", "prob", "probability", "ratio") or "drop" in n or \
        n.endswith(("_p", "_rate", "_prob"))


def rates(ctx, target, params, taken: set[str]) -> dict:
    """{argument: 0.0} for the dropout-fed arguments no other rule took (see the module docstring)."""
    out = {}
    for p in params:
        if p.name.lower() in taken or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is not inspect.Parameter.empty and not isinstance(p.default, (int, float)):
            continue
        if p.name in dropout_fed(target):
            out[p.name] = 0.0
            ctx.note(f"constructor argument {p.name!r}: passed 0.0 (the constructor hands it to a "
                     f"dropout)")
    return out


def none_rates(ctx, target, params, bound) -> dict:
    """{argument: 0.0} for the arguments defaulting to None, not bound to anything else (`bound`),
    that the constructor hands to a dropout (see the module docstring)."""
    out = {}
    for p in params:
        if p.default is None and p.name not in bound and p.name in dropout_fed(target):
            out[p.name] = 0.0
            ctx.note(f"constructor argument {p.name!r}: defaults to None but is handed to a dropout "
                     f"in the constructor: passed 0.0")
    return out
