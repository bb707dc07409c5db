"""Which constructor argument is the width and which the head count, read from what the
constructor does with them, where their names say otherwise.

BERT's paper names its sizes L (layers), H (hidden width) and A (attention heads), and code written
after it keeps them: `MultiHeadAttention(H, A)`. The oracle's name list reads a lone `h` as the head
count (`MultiHeadedAttention(h, d_model)`, the Annotated Transformer's), so `H` took num_heads and
`A`, named by nothing, took d_model by position: the layer was built with the sizes swapped.

Read from the constructor's text (`ast`): when it divides one of its arguments by another
(`self.d_k = H // A`, `H % A`, `H / A`), the dividend is a width split into heads and the divisor
the head count. That is used only to correct a name the head count's list claimed for the
dividend; one such division must be unambiguous (a single pair of arguments), else nothing
changes. The report says what was read.
"""
from __future__ import annotations

import ast
import inspect
import textwrap


def divided_pairs(fn, depth: int = 1) -> set[tuple[str, str]]:
    """(dividend, divisor) argument names of `fn` that its text divides one by the other, or hands
    to a class of its module whose constructor does (`MultiHeadAttention(H, A)` in a layer; one
    level down)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, ValueError, IndentationError):
        return set()
    fdef = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                None)
    if fdef is None:
        return set()
    a = fdef.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} - {"self", "cls"}
    pairs = set()
    for n in ast.walk(fdef):
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.FloorDiv, ast.Div, ast.Mod)) and \
                isinstance(n.left, ast.Name) and isinstance(n.right, ast.Name) and \
                n.left.id in params and n.right.id in params and n.left.id != n.right.id:
            pairs.add((n.left.id, n.right.id))
    if pairs or depth <= 0:
        return pairs
    space = getattr(fn, "__globals__", {})
    for call in (n for n in ast.walk(fdef) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
        cls = space.get(call.func.id)
        if not inspect.isclass(cls) or "__init__" not in vars(cls):
            continue
        try:
            names = [p for p in inspect.signature(cls.__init__).parameters][1:]
        except (TypeError, ValueError):
            continue
        passed = {names[i]: x.id for i, x in enumerate(call.args[:len(names)])
                  if isinstance(x, ast.Name) and x.id in params}
        passed.update({k.arg: k.value.id for k in call.keywords
                       if k.arg and isinstance(k.value, ast.Name) and k.value.id in params})
        for w, h in divided_pairs(cls.__init__, depth - 1):
            if w in passed and h in passed and passed[w] != passed[h]:
                pairs.add((passed[w], passed[h]))
    return pairs


def head_count_correction(fn, heads_aliases) -> tuple[str, str] | None:
    """(width argument, head-count argument) when `fn` divides an argument whose name the head
    count's aliases claim by another argument (`H // A`); None otherwise."""
    pairs = divided_pairs(fn)
    if len(pairs) != 1:
        return None
    width, heads = next(iter(pairs))
    claimed = {x.lower() for x in heads_aliases}
    if width.lower() not in claimed or heads.lower() in claimed:
        return None
    return width, heads
