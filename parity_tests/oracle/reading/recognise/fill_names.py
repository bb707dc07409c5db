"""A mask's fill value bound to a name first (`neg = torch.finfo(scores.dtype).min`, `big = -1e9`,
then `scores.masked_fill(mask, neg)`) reads as the value itself: hidden_mask.py, which reads a
True = hidden mask from a large negative fill, gave up on the bare name and handed such code the
opposite convention. Only a name every binding of which, in the text read, is a plain assignment
of such a value (never a parameter, a loop or `with` target, an augmented assignment)."""
from __future__ import annotations

import ast
from typing import Callable, Iterator


def _names(target: ast.AST | None) -> Iterator[str]:
    for x in ast.walk(target) if target is not None else ():
        if isinstance(x, ast.Name):
            yield x.id


def _other_bindings(n: ast.AST) -> Iterator[str]:
    """Names `n` binds otherwise than by `name = value`."""
    if isinstance(n, ast.arg):
        yield n.arg
    elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr, ast.AugAssign)):
        yield from _names(n.target)
    elif isinstance(n, ast.withitem):
        yield from _names(n.optional_vars)
    elif isinstance(n, (ast.Assign, ast.AnnAssign)):
        for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
            if not isinstance(t, ast.Name):
                yield from _names(t)          # unpacking, attributes, subscripts


def negative_fill_reader(tree: ast.AST, is_fill: Callable[[ast.AST], bool]) -> Callable[[ast.AST], bool]:
    """`is_fill`, widened to the names the text binds only to values `is_fill` accepts."""
    good: set[str] = set()
    bad: set[str] = set()
    for n in ast.walk(tree):
        bad.update(_other_bindings(n))
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    (good if is_fill(n.value) else bad).add(t.id)
    names = good - bad
    return lambda node: is_fill(node) or (isinstance(node, ast.Name) and node.id in names)
