"""Files that run a script when imported: a notebook exported as `.py`, or one file holding the
model, its training loop and a sampling call with no `if __name__ == "__main__":` guard. Imported
as written, such a file trains for minutes before its classes can be checked (TIMEOUT).

Read from the text alone (`ast`): a top-level `for` / `while` loop is script code when nothing the
file defines can see what it does: no function or class of the file reads, as a global, a name the
loop assigns or changes in place (`losses.append(loss)`, `model.zero_grad()`, `table[i] = ...`;
a call on an imported module, `np.zeros(...)`, changes nothing of the file's).
A name bound at top level to another name, or to an item or attribute of one (`alias = W`), may be
the same object: changing it counts as changing both. When the file holds such a loop, the module is
run without those loops and without top-level calls of the file's own functions that change nothing
the definitions read either (`train()`, `generate_text(model)`; one that declares `global`, changes a
global a definition reads in place, or calls such a function, is kept);
everything else (imports, definitions, constants, the objects built at top level) runs as written.
A loop some definition depends on (filling a table a class reads) is kept, so is one that sets an
attribute or calls `setattr` (it could rewrite a class through another name: `for c in (A, B):
c.forward = f`), and a file without a loop to leave out is imported unchanged. What was left out is named in the report.

The other way round, a file whose classes read sizes as globals that only its
`if __name__ == "__main__":` block assigns (graykode's nlp-tutorial Transformer: `d_model = 512`,
`n_heads = 8`, `src_vocab_size = len(src_vocab)` set there, `nn.Linear(d_model, d_k * n_heads)` in
the classes) cannot build a class when imported (NameError). Those assignments, and the ones they
read, are run after the definitions when each is a plain value (numbers, strings, literals, names
already set, arithmetic, `len` / `int` / `float` / `min` / `max` of them): nothing else of the block
runs, and the report names what was set (main_constants_note).
"""
from __future__ import annotations

import ast
import os

from .notebook_calls import calls_to_leave_out


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _free_reads(defn: ast.AST) -> set[str]:
    """Names a top-level function or class reads but does not bind itself (its globals); a name
    bound anywhere inside a function (a parameter of it or of a function nested in it, an
    assignment) counts as its own."""
    if isinstance(defn, ast.ClassDef):
        out = set().union(*(_loads(n) for n in defn.bases + defn.keywords + defn.decorator_list))
        for stmt in defn.body:
            out |= _free_reads(stmt) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                          ast.ClassDef)) else _loads(stmt)
        return out
    own = {n.id for n in ast.walk(defn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for fn in ast.walk(defn):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = fn.args
            own |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
            own |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    return _loads(defn) - own


def _changed(loop: ast.AST) -> set[str]:
    """Names a statement assigns, or changes in place through a method call, an item or attribute."""
    out = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for n in ast.walk(loop):
        target = None
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            target = n.func.value
        elif isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load):
            target = n.value
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        if isinstance(target, ast.Name):
            out.add(target.id)
    return out


def _rebinds_attributes(loop: ast.AST) -> bool:
    """Whether a statement sets an attribute (`cls.forward = f`, `p.data -= g`) or calls
    `setattr`: it may rewrite the file's classes or objects through another name, so it is kept."""
    return any((isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)) or
               (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr")
               for n in ast.walk(loop))


def _aliases(tree: ast.Module) -> dict[str, set[str]]:
    """For each top-level name bound to another name, an item or an attribute of one (`alias = W`,
    `row = TABLE[0]`, `cfg = CONFIG.params`), the names it may share an object with (both ways)."""
    links: dict[str, set[str]] = {}
    for s in tree.body:
        if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
            root = s.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if not isinstance(root, ast.Name):
                continue
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        links.setdefault(n.id, set()).add(root.id)
                        links.setdefault(root.id, set()).add(n.id)
    return links


def _reach(names: set[str], links: dict[str, set[str]]) -> set[str]:
    out, todo = set(names), list(names)
    while todo:
        for m in links.get(todo.pop(), ()):
            if m not in out:
                out.add(m)
                todo.append(m)
    return out


def _locals(fn: ast.AST) -> set[str]:
    """Names a function binds itself (parameters, assignments), unless it declares them global."""
    declared = {x for n in ast.walk(fn) if isinstance(n, (ast.Global, ast.Nonlocal)) for x in n.names}
    own = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for f in ast.walk(fn):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = f.args
            own |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
            own |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    return own - declared


def _touches(stmt: ast.AST, seen: set[str], modules: set[str], links: dict[str, set[str]],
             local: set[str] = frozenset()) -> bool:
    """Whether `stmt` may change what the file's definitions read: a name they read, or one that
    may be the same object (an alias), assigned or changed in place; `local` names do not count."""
    changed = _reach((_changed(stmt) - set(local)) - modules, links)
    return bool(changed & seen) or any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                                       and n.func.id in ("globals", "vars", "exec", "eval")
                                       for n in ast.walk(stmt))


def _sets_outside(fn: ast.AST) -> bool:
    """Whether a function sets an attribute of something it did not make or receive (a global:
    `Attention.forward = f`), or calls `setattr`: it could rewrite a class of the file."""
    local = _locals(fn)
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr":
            return True
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            root = n.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in local):
                return True
    return False


def script_statements(tree: ast.Module) -> list[ast.stmt]:
    """The top-level statements to leave out (see the module docstring); [] when the file holds no
    top-level loop that nothing it defines depends on."""
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    # what the definitions read, and the definitions' own names (the oracle looks them up)
    seen: set[str] = set().union(*(_free_reads(d) for d in defs), {d.name for d in defs})
    modules = {(a.asname or a.name).split(".")[0] for s in tree.body
               if isinstance(s, (ast.Import, ast.ImportFrom)) for a in s.names}
    links = _aliases(tree)
    loops = [s for s in tree.body if isinstance(s, (ast.For, ast.AsyncFor, ast.While))
             and not _touches(s, seen, modules, links) and not _rebinds_attributes(s)]
    if not loops:
        return []
    funcs = {d.name: d for d in defs if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # a function is pure here when it declares no global and changes nothing the definitions read
    # (through its free names), and calls no impure function of the file; found by a fixpoint
    impure = {n for n, d in funcs.items()
              if any(isinstance(x, (ast.Global, ast.Nonlocal)) for x in ast.walk(d))
              or _touches(d, seen, modules, links, _locals(d)) or _sets_outside(d)}
    grew = True
    while grew:
        grew = False
        for n, d in funcs.items():
            if n not in impure and any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                                       and c.func.id in impure for c in ast.walk(d)):
                impure.add(n)
                grew = True
    calls = [s for s in tree.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
             and isinstance(s.value.func, ast.Name) and s.value.func.id in funcs
             and s.value.func.id not in impure]
    return sorted(loops + calls, key=lambda s: s.lineno)


def without_script(source: str, path: str, not_installed=None
                   ) -> tuple[ast.Module | None, list[int], list[int]]:
    """The module's tree without its script statements, the lines they start on, and the lines of
    the notebook set-up calls left out (notebook_calls.py, when `not_installed(package)` is given);
    (None, [], []) when nothing is left out (or the text does not parse: the import reports that)."""
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError):
        return None, [], []
    skip = script_statements(tree)
    calls = calls_to_leave_out(tree, not_installed) if not_installed is not None else []
    consts = main_block_constants(tree)
    if not skip and not calls and not consts:
        return None, [], []
    ids = {id(s) for s in skip + calls}
    tree.body = [s for s in tree.body if id(s) not in ids] + consts
    if consts:
        MAIN_SET[os.path.abspath(path)] = [t.id for s in consts for t in s.targets]
    return tree, [s.lineno for s in skip], [s.lineno for s in calls]


SAFE_CALLS = ("len", "int", "float", "round", "min", "max", "abs")
PLAIN_NODES = (ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop,
               ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Call, ast.Subscript, ast.Slice)
MAIN_SET: dict[str, list[str]] = {}   # file -> the names set from its __main__ block


def _is_main_block(s: ast.stmt) -> bool:
    t = s.test if isinstance(s, ast.If) else None
    if not isinstance(t, ast.Compare) or len(t.comparators) != 1 or not isinstance(t.ops[0], ast.Eq):
        return False
    sides = (t.left, t.comparators[0])
    return any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides) and \
        any(isinstance(a, ast.Constant) and a.value == "__main__" for a in sides)


def _plain(expr: ast.AST) -> bool:
    return all(isinstance(n, PLAIN_NODES) for n in ast.walk(expr)) and all(
        isinstance(n.func, ast.Name) and n.func.id in SAFE_CALLS and not n.keywords
        for n in ast.walk(expr) if isinstance(n, ast.Call))


def main_block_constants(tree: ast.Module) -> list[ast.stmt]:
    """The plain assignments of the `if __name__ == "__main__":` block that set names the file's
    definitions read as globals and nothing else at top level binds, with those they read."""
    import builtins
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    outside = [s for s in tree.body if not _is_main_block(s)]
    bound = {n.id for s in outside if s not in defs for n in ast.walk(s) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Store)} | {d.name for d in defs} | {
        (a.asname or a.name).split(".")[0] for s in outside if isinstance(s, (ast.Import, ast.ImportFrom))
        for a in s.names}
    missing = set().union(*(_free_reads(d) for d in defs)) - bound - set(dir(builtins))
    plain = [s for b in tree.body if _is_main_block(b) for s in b.body
             if isinstance(s, ast.Assign) and _plain(s.value)
             and all(isinstance(t, ast.Name) for t in s.targets)]
    keep, want = [], set(missing)
    for s in reversed(plain):                  # the last assignment of a name is the one it keeps
        names = {t.id for t in s.targets}
        if names & want:
            keep.append(s)
            want = (want - names) | (_loads(s.value) - bound - set(dir(builtins)))
    return list(reversed(keep)) if missing - want else []


def main_constants_note(path: str, names: list[str]) -> str:
    shown = ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
    return (f"{path}: its classes read {shown} as globals that only its `if __name__ == "
            f"'__main__':` block sets: those plain assignments were run after the definitions "
            f"(nothing else of the block), so the sizes are the file's own")


def skipped_note(path: str, lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:8]) + (" ..." if len(lines) > 8 else "")
    return (f"{path} runs a script when imported (a top-level loop nothing it defines reads): "
            f"imported without its top-level loops and calls of its own functions (line(s) "
            f"{shown}); its definitions and top-level objects as written")
