"""Recogniser: attention whose mask is True (or 1) where a key is HIDDEN, written with a comparison
that selects the mask's set entries or with a large negative spelled as a string:

    scores.masked_fill(mask == 1, float("-1e9"))     the set entries are filled
    np.where(mask != 0, -1e9, scores)                the set entries take the large negative

`hidden_mask` reads the bare forms (`masked_fill(mask, -inf)`) and gives up on any comparison of
the mask, since `mask == 0` says the opposite (True = seen), and on fills it cannot tell are large
negatives. This probe runs after it, only where it read nothing: it rewrites, in a copy of the
candidate's own text, each comparison of the mask (or a reshape of it) with a constant that keeps
exactly the set entries (`== 1`, `== True`, `!= 0`, `!= False`, `> 0`, `>= 1`) into the mask
itself, and each `float("<number>")` into that number, then asks `hidden_mask` the same question
of the rewritten text. `mask == 0`, `mask < 1` and every other comparison are left as written, so
such code is still not read. Code the mask is handed to is followed as `hidden_mask` follows it,
on its own text, not rewritten. Same components, guards and gap (`mask_convention`) as
`hidden_mask`; every quantity is still compared with the reference.
"""
from __future__ import annotations

import ast
import copy
import math

from .hidden_mask import COMPONENTS, _reshape_of, _text, reads_true_as_hidden, scope_of

SELECTS_SET = {ast.Eq: (1,), ast.NotEq: (0,), ast.Gt: (0,), ast.GtE: (1,)}
"""Comparison operator -> the constants with which it keeps exactly a mask's nonzero entries
(True == 1 and False == 0, so `== True` and `!= False` are read too)."""


class _Rewrite(ast.NodeTransformer):
    """`mask == 1` -> `mask`; `float("-1e9")` -> -1e9. `changed`: whether anything was rewritten."""

    def __init__(self, name: str):
        self.name = name
        self.changed = False

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        if len(node.ops) != 1 or not _reshape_of(node.left, self.name):
            return node
        right = node.comparators[0]
        keeps = SELECTS_SET.get(type(node.ops[0]), ())
        if isinstance(right, ast.Constant) and isinstance(right.value, (bool, int, float)) \
                and right.value in keeps:
            self.changed = True
            return node.left
        return node

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "float" and len(node.args) == 1 \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            try:
                v = float(node.args[0].value)
            except ValueError:
                return node
            if math.isfinite(v):
                self.changed = True
                return ast.copy_location(ast.Constant(v), node)
        return node


def reads_compared_as_hidden(tree: ast.AST, name: str, scope=None) -> bool:
    """Whether the text, once its set-selecting comparisons of `name` and its numeric float strings
    are rewritten (see above), applies `name` only as a True = hidden mask; False when nothing
    was rewritten (hidden_mask has answered for that text)."""
    rewrite = _Rewrite(name)
    tree = rewrite.visit(copy.deepcopy(tree))
    return rewrite.changed and reads_true_as_hidden(tree, name, scope)


def probe(adapter) -> None:
    opts = adapter.opts
    if adapter.comp.name not in COMPONENTS or (opts.mask_convention, opts.mask_dtype) != ("keep", "bool") \
            or set(getattr(opts, "declared", ()) or ()) & {"mask_convention", "mask_dtype"} \
            or adapter.mode not in ("class", "instance", "function") or adapter.hooks is not None \
            or not adapter.comp.masks:
        return
    binding = getattr(adapter, "binding", None)
    if binding is None:
        return
    masks = [m.name for m in adapter.comp.masks if m.name not in binding.unbound]
    args = [binding.arg_of.get(m, "") for m in masks]
    if not args or any(not a or a.startswith(("*", "#")) or a in binding.guessed for a in args):
        return
    obj = adapter.obj
    tree = _text(type(obj) if adapter.mode == "instance" else obj)
    scope = scope_of(obj, adapter.probe if adapter.mode == "class" else None)
    if tree is None or not all(reads_compared_as_hidden(tree, a, scope) for a in args):
        return
    said = " and ".join(repr(a) for a in args)
    adapter.opts.mask_convention = "drop"
    adapter.notes.append(f"the candidate applies its mask {said} as True = hidden (it fills a large "
                         f"negative where the mask compared with a constant is set, as "
                         f"`masked_fill(mask == 1, -1e9)`): masks handed over True where a key is "
                         f"hidden, as --mask-convention drop")
