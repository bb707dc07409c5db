"""Recogniser: a forward argument named for a mask that is a switch, not a mask
(`forward(inputs, mask=True)`, where `if mask:` turns on a causal mask the code builds itself).
Handing it the drawn mask tensor made the call raise (a tensor of many elements has no truth
value) or, for one element, switched the future off by accident.

Found from the forward's source (nothing runs): an argument whose name holds `mask`, whose default
is True or False, and whose every use is as a truth value (`if mask:`, `if not mask`, `x if mask
else y`, `mask and ...`), where no test on it also holds another mask argument (`forward(x, mask=None,
use_mask=True)` with `if use_mask and mask is not None:` turns on the mask it is given: kept at its
default, the mask handed over). It is read as `causal=True` constructor flags are (recognise/flags.py):
for a component whose reference attention is not causal (attention, encoder layer) it is passed
False, so the attention attends everywhere, no mask is handed to it, and the report says so.
Its True value, the causal mask itself, is not compared.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

from .flags import NOT_CAUSAL


def _truth_uses(tree: ast.AST) -> set[int]:
    """ids of the Name nodes used only as a truth value."""
    tests = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            tests.append(node.test)
        elif isinstance(node, ast.BoolOp):
            tests.extend(node.values)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            tests.append(node.operand)
    return {id(t) for t in tests if isinstance(t, ast.Name)}


def switches(fn) -> list[str]:
    """The forward's mask-named arguments with a bool default used only as truth values."""
    try:
        sig = inspect.signature(fn)
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, ValueError, SyntaxError, IndentationError):
        return []
    truth = _truth_uses(tree)
    out = []
    for p in sig.parameters.values():
        if not isinstance(p.default, bool) or "mask" not in p.name.lower():
            continue
        uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == p.name]
        if uses and all(id(n) in truth for n in uses):
            out.append(p.name)
    masks = {p.name for p in sig.parameters.values() if "mask" in p.name.lower()} - set(out)
    return [n for n in out if not _gates(tree, n, masks)]


def _gates(tree: ast.AST, name: str, masks: set[str]) -> bool:
    """Whether a test on `name` (its `if`, `x if name else y`, `name and ...`) also holds another
    mask argument in its test or branches (`if use_mask and mask is not None:`, `if use_mask:
    scores.masked_fill(~mask, ...)`): a switch turning the mask it is given on, not a causal one."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.BoolOp)):
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            if name in names and names & masks:
                return True
    return False


def constants(adapter, fn, given: dict | None) -> dict | None:
    """naming.bind's `constants` (`given`) with each mask switch passed False, for components whose
    reference is not causal; the notes say so."""
    found = switches(fn) if adapter.comp.name in NOT_CAUSAL else []
    for name in found:
        note = (f"forward argument {name!r} is used only as a truth value (`if {name}:`): a causal "
                f"switch, not a mask; passed False (the reference attention is not causal) and no "
                f"mask handed to it; its True value (the causal mask) is not compared")
        if note not in adapter.notes:
            adapter.notes.append(note)
    return {**(given or {}), **{n: False for n in found}} if found else given
