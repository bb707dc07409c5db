"""The mask dtypes a submission says it takes, read from its source in the parent (never run).

A mask is drawn in one dtype per check (`--mask-dtype`, bool by default), and other dtypes only
where the assignment names them (`mask_dtypes_also`): right bool-only code (`~mask`) would fail an
int mask, so none can be required by default. Code that SAYS it takes another dtype is another
matter: a layer whose mask argument is annotated `torch.LongTensor`, or whose docstring says
"mask: bool or 0/1 int", and which reads 0/1 integers the other way round
(`oracle_hostile/mask_dtype_misread.py`) matched every check drawing bool masks. What it claims is
now exercised as if the assignment named it: each claimed dtype the check does not draw is added to
`mask_dtypes_also` (the `mask_dtype` mode, sandbox/layout_modes.py), and the report says why.

    claimed_mask_dtypes(path, entry, mask_names) -> [(dtype, "where it says so")]

Read: the entry (a class, with its same-file bases, or a function) in `path`: the annotation of
each forward argument named for a mask (`mask_names`, or any name holding "mask"), and each item
(a line, cut where the next "name:" starts) of the class's, the forward's or the function's
docstring that names such an argument and an integer or boolean type word. A claim can only widen what is compared.
"""
from __future__ import annotations

import ast
import re

from .source_text import unparsed

INT_WORDS = re.compile(r"\b(int|ints|integer|integers|long|int8|int16|int32|int64|uint8|"
                       r"IntTensor|LongTensor|ByteTensor|ShortTensor)\b", re.IGNORECASE)
BOOL_WORDS = re.compile(r"\b(bool|boolean|BoolTensor)\b", re.IGNORECASE)
ITEMS = re.compile(r";|,\s*(?=[A-Za-z_][\w ]*:)")     # where a docstring line's next item starts
FORWARDS = ("forward", "__call__")
MAX_SOURCE = 4 << 20          # bytes: a larger file is the import scan's load_error, not read here


def _entry(tree: ast.Module, name: str):
    """The top-level class or function `name` in the module, or None."""
    return next((n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef,
                                                        ast.AsyncFunctionDef)) and n.name == name),
                None)


def _classes(tree: ast.Module, cls: ast.ClassDef, depth: int = 4) -> list[ast.ClassDef]:
    """The class and the bases it names that the same file defines (a few levels)."""
    out, todo = [], [cls]
    while todo and len(out) < depth:
        c = todo.pop(0)
        out.append(c)
        for b in c.bases:
            found = _entry(tree, b.id) if isinstance(b, ast.Name) else None
            if isinstance(found, ast.ClassDef) and found not in out:
                todo.append(found)
    return out


def _functions(tree: ast.Module, node) -> tuple[list, list[str]]:
    """(the forward functions, the docstrings to read) of an entry: a function's own; a class's
    forward / __call__ where it or the nearest same-file base defines one, with that class's and
    the entry's docstrings."""
    if not isinstance(node, ast.ClassDef):
        return [node], [ast.get_docstring(node) or ""]
    docs = [ast.get_docstring(node) or ""]
    for c in _classes(tree, node):          # the forward that runs: the first one defined
        funcs = [f for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and f.name in FORWARDS]
        if funcs:
            return funcs, docs + [ast.get_docstring(c) or ""] + [ast.get_docstring(f) or "" for f in funcs]
    return [], docs


def _mask_args(funcs, mask_names) -> list[ast.arg]:
    names = {n.lower() for n in mask_names}
    out = []
    for f in funcs:
        a = f.args
        for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
            low = arg.arg.lower()
            if low in names or "mask" in low:
                out.append(arg)
    return out


def _said(text: str) -> list[str]:
    """The dtypes a piece of text names (int before bool)."""
    return [d for d, words in (("int", INT_WORDS), ("bool", BOOL_WORDS)) if words.search(text)]


def claimed_mask_dtypes(path: str, entry: str, mask_names=()) -> list[tuple[str, str]]:
    """[(dtype, where)]: "int" / "bool" each at most once, where the entry's code says its mask
    takes it; [] where the file cannot be read or parsed, or names nothing."""
    try:
        with open(path, "rb") as fh:
            src = fh.read(MAX_SOURCE + 1)
        if len(src) > MAX_SOURCE:
            return []
        tree = ast.parse(src)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    node = _entry(tree, entry.split(",")[0].strip())
    if node is None:
        return []
    funcs, docs = _functions(tree, node)
    args = _mask_args(funcs, mask_names)
    found: dict[str, str] = {}
    for arg in args:
        text = unparsed(arg.annotation) if arg.annotation is not None else None
        if text is not None:
            for d in _said(text):
                found.setdefault(d, f"its argument {arg.arg!r} annotated {text} (line {arg.lineno})")
    words = {a.arg.lower() for a in args}
    for doc in docs:
        for line in doc.splitlines():
            for part in ITEMS.split(line):      # "mask: (B, T) bool, n_heads: int": the mask's part
                named = {w.lower() for w in re.findall(r"[A-Za-z_]\w*", part)} & words
                if named:
                    for d in _said(part):
                        found.setdefault(d, f"its docstring: {line.strip()[:120]!r}")
    return [(d, found[d]) for d in ("int", "bool") if d in found]


def widen(opts, claims: list[tuple[str, str]]) -> str | None:
    """Add each claimed dtype the check neither draws nor already varies to `opts.mask_dtypes_also`;
    the note saying so, or None where nothing was added (an additive convention has no dtype)."""
    if getattr(opts, "mask_convention", "keep") == "additive":
        return None
    have = {opts.mask_dtype, *(opts.mask_dtypes_also or ())}
    new = [(d, where) for d, where in claims if d not in have]
    if not new:
        return None
    opts.mask_dtypes_also = tuple(opts.mask_dtypes_also or ()) + tuple(d for d, _ in new)
    return ("the candidate says its mask takes " + "; ".join(f"{d} ({where})" for d, where in new)
            + ": masks are also handed over so on some examples (the mask_dtype run, as "
            + " ".join(f"--also-mask-dtype {d}" for d, _ in new) + "), and compared")
