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
`1 - mask`, `logical_not`), uses it as `where(mask, scores, -inf)` (True = seen) or rebinds it from
anything but a reshape of itself.

A mask handed to another function is followed into it, by the parameter it is passed as (by
position or keyword), when that function's code lies in the candidate's folder (its own file or a
sibling file, never a library): a module-level helper (`attend(q, k, v, mask=mask)`), a method
(`self._attend(..., mask)`), or the forward of a sub-module the layer holds (`self.self_attn(x, x,
x, mask)`, read on the probe build), at most DEPTH calls deep; each such function must itself apply
the mask only as above. Anything else it is handed to (a library, `*args`, a function out of reach)
may read it either way, and nothing is read. For sdpa, multi-head attention and encoder/decoder
layers (every mask a layer is handed must be read so). Only while the mask options are the defaults
and undeclared; every quantity is still compared with the reference, so a layer that then hides
the wrong keys is MISMATCH.
The adapted convention is the gap `mask_convention` (core/completeness): the quick check matches and
names it; grading fails it unless the assignment declares that convention.
Code choosing its convention by the mask's dtype (`if mask.dtype == torch.bool: masked_fill(mask,
-inf) else: masked_fill(mask <= 0, -inf)`) is read along the branch a boolean mask takes, the
oracle's masks being boolean while the mask options are the defaults.
"""
from __future__ import annotations

import ast
import inspect
import os
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

from .fill_names import negative_fill_reader

COMPONENTS = ("sdpa", "mha", "encoder_layer", "decoder_layer")
DEPTH = 3                           # calls followed from the candidate's own forward
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


BOOL_DTYPES = ("bool", "bool_", "bool8")


def _bool_test(test: ast.AST, name: str) -> bool | None:
    """True when `test` asks whether the mask `name` is boolean (`mask.dtype == torch.bool`,
    `mask.dtype is np.bool_`), False when it asks the opposite (`!=`, `is not`), None otherwise."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and len(test.comparators) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(right, ast.Attribute) and right.attr == "dtype":
        left, right = right, left
    if not (isinstance(left, ast.Attribute) and left.attr == "dtype" and _reshape_of(left.value, name)):
        return None
    kind = right.attr if isinstance(right, ast.Attribute) else right.id if isinstance(right, ast.Name) else ""
    if kind not in BOOL_DTYPES:
        return None
    if isinstance(test.ops[0], (ast.Eq, ast.Is)):
        return True
    return False if isinstance(test.ops[0], (ast.NotEq, ast.IsNot)) else None


class _BoolBranch(ast.NodeTransformer):
    """Keeps, of each `if <mask is boolean>:` statement, the branch a boolean mask takes."""

    def __init__(self, name: str):
        self.name = name

    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        is_bool = _bool_test(node.test, self.name)
        if is_bool is None:
            return node
        return (node.body if is_bool else node.orelse) or ast.Pass()


def reads_true_as_hidden(tree: ast.AST, name: str, scope: Scope | None = None, depth: int = DEPTH) -> bool:
    """Whether the text applies the argument `name` only as a True = hidden mask (see above);
    `scope`: where the text's calls are looked up, to follow the mask into them (none: not followed)."""
    import copy
    try:
        tree = _BoolBranch(name).visit(copy.deepcopy(tree))
    except RecursionError:                # an expression nested too deeply to walk: not read
        return False
    hidden = False
    neg = negative_fill_reader(tree, _is_negative_fill)     # `neg = ...min; masked_fill(mask, neg)`

    def m(x) -> bool:                     # the mask, or a reshape of it (`mask.unsqueeze(1)`)
        return _reshape_of(x, name)
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare) and any(m(x) for x in [n.left, *n.comparators]) and \
                not all(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops):   # `mask is None`
            return False
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Invert, ast.Not)) and m(n.operand):
            return False
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and m(n.right):
            return False
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(_is(t, name) for t in targets) and not _reshape_of(n.value, name):
                return False
        if not isinstance(n, ast.Call):
            continue
        call = _call_name(n)
        args = list(n.args)
        if call in INVERTS and any(m(a) for a in args):
            return False
        if call in FILL and len(args) >= 2 and m(args[0]):
            if not neg(args[1]):
                return False
            hidden = True
        elif call in WHERE and len(args) >= 3 and m(args[0]):
            if not (neg(args[1]) and not neg(args[2])):
                return False                      # where(mask, scores, -inf): True = seen
            hidden = True
        elif any(m(a) for a in args + [k.value for k in n.keywords]) and \
                call not in RESHAPES and call not in FILL + WHERE:
            if not _followed_hides(n, name, scope, depth):
                return False                      # handed on: read elsewhere, either way
            hidden = True
    for n in ast.walk(tree):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and \
                ((m(n.left) and neg(n.right)) or
                 (m(n.right) and neg(n.left))):
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


@dataclass
class Scope:
    """Where the names of one function's text are looked up: its module's globals, the class whose
    methods `self.m(...)` are, an instance for its sub-modules, and the folder whose code is read."""
    names: dict
    cls: type | None
    inst: Any
    root: str


def _own(fn, root: str) -> bool:
    """Whether `fn`'s code lies in the folder `root` (the candidate's file or a sibling)."""
    try:
        f = inspect.getsourcefile(fn)
    except TypeError:
        return False
    f = os.path.realpath(f) if f else ""
    return bool(f) and f.startswith(root + os.sep) and \
        not any(p in f.split(os.sep) for p in ("site-packages", "dist-packages"))


def _module_call(cls, root: str) -> tuple[Any, int] | None:
    """What calling an instance of `cls` runs, when it is code of the folder `root`: its own
    `__call__`, else its `forward` (torch's `Module.__call__` runs it)."""
    for attr in ("__call__", "forward"):
        fn = inspect.getattr_static(cls, attr, None)
        if inspect.isfunction(fn) and _own(fn, root):
            return fn, 1
    return None


def _callee(call: ast.Call, scope: Scope):
    """(function, leading parameters the call does not pass, its scope), for a call whose target
    is code of the candidate's folder; None otherwise."""
    f, cls, inst = call.func, scope.cls, scope.inst
    found = None
    try:
        if isinstance(f, ast.Name):
            fn = scope.names.get(f.id)
            if inspect.isfunction(fn):
                found = fn, 0, None, None
        elif isinstance(f, ast.Attribute) and _is(f.value, "self") and cls is not None:
            static = inspect.getattr_static(cls, f.attr, None)
            if isinstance(static, staticmethod):
                found = static.__func__, 0, cls, inst
            elif inspect.isfunction(static):
                found = static, 1, cls, inst
            elif inst is not None and static is None:
                sub = getattr(inst, f.attr, None)          # a sub-module: its forward
                made = _module_call(type(sub), scope.root) if sub is not None else None
                if made is not None:
                    found = made[0], made[1], type(sub), sub
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and \
                _is(f.value.value, "self") and f.attr in ("forward", "__call__") and inst is not None:
            sub = getattr(inst, f.value.attr, None)        # self.attn.forward(...)
            fn = inspect.getattr_static(type(sub), f.attr, None) if sub is not None else None
            if inspect.isfunction(fn):
                found = fn, 1, type(sub), sub
        elif isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and \
                inspect.isclass(scope.names.get(f.func.id)):
            made = _module_call(scope.names[f.func.id], scope.root)   # `Attention()(q, k, v, mask)`
            if made is not None:
                found = made[0], made[1], scope.names[f.func.id], None
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                inspect.ismodule(scope.names.get(f.value.id)):
            fn = getattr(scope.names[f.value.id], f.attr, None)   # helpers.attend(...)
            if inspect.isfunction(fn):
                found = fn, 0, None, None
    except Exception:  # noqa: BLE001 - a lookup the candidate's code answers badly: not followed
        return None
    if found is None or not _own(found[0], scope.root):
        return None
    fn, skip, c, i = found
    return fn, skip, Scope(getattr(fn, "__globals__", {}), c, i, scope.root)


def _param_of(call: ast.Call, name: str, fn, skip: int) -> str | None:
    """The one parameter of `fn` the call passes the mask to; None when it is passed twice, through
    `*args`/`**kwargs`, or to a parameter that is not there."""
    try:
        params = list(inspect.signature(fn).parameters.values())[skip:]
    except (TypeError, ValueError):
        return None
    by_name = {p.name: p for p in params}
    got = []
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            return None                       # positions after it unknown
        if _reshape_of(a, name):
            ok = i < len(params) and params[i].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                        inspect.Parameter.POSITIONAL_OR_KEYWORD)
            got.append(params[i].name if ok else None)
    for k in call.keywords:
        if k.arg is None:
            return None                       # **kwargs
        if _reshape_of(k.value, name):
            p = by_name.get(k.arg)
            got.append(k.arg if p is not None and p.kind != inspect.Parameter.VAR_KEYWORD else None)
    return got[0] if len(got) == 1 else None


def _followed_hides(call: ast.Call, name: str, scope: Scope | None, depth: int) -> bool:
    """Whether the function of the candidate's folder that `call` hands the mask to applies it only
    as True = hidden (see above)."""
    if scope is None or depth <= 0:
        return False
    target = _callee(call, scope)
    if target is None:
        return False
    fn, skip, inner = target
    param = _param_of(call, name, fn, skip)
    tree = _text(fn) if param else None
    return tree is not None and reads_true_as_hidden(tree, param, inner, depth - 1)


def scope_of(obj, inst=None) -> Scope | None:
    """The scope of a candidate (a class, an instance or a function) and its folder."""
    cls = obj if isinstance(obj, type) else None if inspect.isroutine(obj) else type(obj)
    inst = inst if cls is obj else None if cls is None else obj
    try:
        f = inspect.getsourcefile(obj if cls is None else cls)
    except TypeError:
        return None
    if not f:
        return None
    mod = sys.modules.get(getattr(obj if cls is None else cls, "__module__", ""), None)
    names = getattr(obj, "__globals__", None) if cls is None else vars(mod) if mod else None
    return Scope(names or {}, cls, inst, os.path.dirname(os.path.realpath(f)))


def _text(obj) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError, ValueError, IndentationError):
        return None


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
    if tree is None or not all(reads_true_as_hidden(tree, a, scope) for a in args):
        return
    said = " and ".join(repr(a) for a in args)
    adapter.opts.mask_convention = "drop"
    adapter.notes.append(f"the candidate applies its mask {said} as True = hidden (its text, or "
                         f"that of code of its own it hands the mask to, fills or adds a large "
                         f"negative where the mask is set): masks handed over True where a key is "
                         f"hidden, as --mask-convention drop")
