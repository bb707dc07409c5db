"""Recogniser: attention whose mask is True (or 1) where a key is HIDDEN, read from what its text
does with the mask, never by trying both conventions:

    scores.masked_fill(mask, float("-inf"))      the mask itself selects what is filled
    np.where(mask, -1e9, scores)                 the mask itself selects the large negative
    scores + mask * -1e9                         the mask, times a large negative, is added

The oracle's default mask is True where a key may be attended (`--mask-convention keep`); such code
given it hides exactly the keys it should see, and correct code was called MISMATCH. When the text
of the candidate (the function, or the class with its methods) applies its mask argument only in
these ways, masks are handed over True = hidden (as `--mask-convention drop`) and the report says
so. Nothing is read when the text also compares the mask (`mask == 0`), inverts it (`~mask`,
`1 - mask`, `logical_not`), uses it as `where(mask, scores, -inf)` (True = seen), rebinds it from
anything but a reshape of itself, or hands it to a function of its own (which may read it either
way). Only while the mask options are the defaults and undeclared; every quantity is still
compared with the reference, so a layer that then hides the wrong keys is MISMATCH.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

COMPONENTS = ("sdpa", "mha")
FILL = ("masked_fill", "masked_fill_")
WHERE = ("where",)
RESHAPES = ("unsqueeze", "view", "reshape", "expand", "expand_as", "to", "float", "bool", "type",
            "astype", "repeat", "squeeze", "contiguous", "expand_dims", "broadcast_to", "asarray",
            "array", "tensor", "as_tensor", "newaxis")
INVERTS = ("logical_not", "bitwise_not", "invert", "logical_xor")


def _is_negative_fill(node: ast.AST) -> bool:
    """-1e9, -10000.0, float('-inf'), -np.inf, -math.inf, torch.finfo(...).min."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = node.operand
        if isinstance(v, ast.Constant) and isinstance(v.value, (int, float)):
            return v.value >= 1e4
        return isinstance(v, ast.Attribute) and v.attr in ("inf", "infty")
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value <= -1e4
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" \
            and node.args and isinstance(node.args[0], ast.Constant):
        return str(node.args[0].value).strip().lower() in ("-inf", "-infinity")
    return isinstance(node, ast.Attribute) and node.attr == "min"


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def reads_true_as_hidden(tree: ast.AST, name: str) -> bool:
    """Whether the text applies the argument `name` only as a True = hidden mask (see above)."""
    hidden = False
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare) and any(_is(x, name) for x in [n.left, *n.comparators]) and \
                not all(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops):   # `mask is None`
            return False
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Invert, ast.Not)) and _is(n.operand, name):
            return False
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and _is(n.right, name):
            return False
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(_is(t, name) for t in targets) and not _reshape_of(n.value, name):
                return False
        if not isinstance(n, ast.Call):
            continue
        call = _call_name(n)
        args = list(n.args)
        if call in INVERTS and any(_is(a, name) for a in args):
            return False
        if call in FILL and len(args) >= 2 and _is(args[0], name):
            if not _is_negative_fill(args[1]):
                return False
            hidden = True
        elif call in WHERE and len(args) >= 3 and _is(args[0], name):
            if not (_is_negative_fill(args[1]) and not _is_negative_fill(args[2])):
                return False                      # where(mask, scores, -inf): True = seen
            hidden = True
        elif any(_is(a, name) for a in args + [k.value for k in n.keywords]) and \
                call not in RESHAPES and call not in FILL + WHERE:
            return False                          # handed on: read elsewhere
    for n in ast.walk(tree):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and \
                ((_is(n.left, name) and _is_negative_fill(n.right)) or
                 (_is(n.right, name) and _is_negative_fill(n.left))):
            p = parents.get(id(n))
            if isinstance(p, ast.BinOp) and isinstance(p.op, ast.Add) or \
                    isinstance(p, ast.AugAssign) and isinstance(p.op, ast.Add):
                hidden = True
            else:
                return False
    return hidden


def _reshape_of(value: ast.AST | None, name: str) -> bool:
    """`mask = mask.unsqueeze(1)`, `mask = mask[:, None]`, `mask = np.expand_dims(mask, 1)`."""
    node = value
    while True:
        if _is(node, name):
            return True
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and _call_name(node) in RESHAPES:
            if isinstance(node.func, ast.Attribute) and not (isinstance(node.func.value, ast.Name)
                                                             and node.func.value.id in ("np", "torch", "numpy")):
                node = node.func.value
            elif node.args:
                node = node.args[0]
            else:
                return False
        else:
            return False


def _text(obj) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError, ValueError, IndentationError):
        return None


def probe(adapter) -> None:
    opts = adapter.opts
    if adapter.comp.name not in COMPONENTS or (opts.mask_convention, opts.mask_dtype) != ("keep", "bool") \
            or set(getattr(opts, "declared", ()) or ()) & {"mask_convention", "mask_dtype"} \
            or adapter.mode not in ("class", "function") or adapter.hooks is not None \
            or not adapter.comp.masks:
        return
    binding = getattr(adapter, "binding", None)
    arg = binding.arg_of.get(adapter.comp.masks[0].name, "") if binding is not None else ""
    if not arg or arg.startswith(("*", "#")):
        return
    tree = _text(adapter.obj)
    if tree is None or not reads_true_as_hidden(tree, arg):
        return
    adapter.opts.mask_convention = "drop"
    adapter.notes.append(f"the candidate applies its mask {arg!r} as True = hidden (its text fills "
                         f"or adds a large negative where the mask is set): masks handed over True "
                         f"where a key is hidden, as --mask-convention drop")
