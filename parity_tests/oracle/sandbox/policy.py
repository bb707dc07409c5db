"""Import policy: which modules a submission may not import, checked twice.

1. `scan(path, forbidden)` in the PARENT, before anything runs: the submission's source (and the
   .py files next to it that it imports) is parsed with `ast` (never executed) and every `import`,
   `from ... import`, `__import__("...")` and `importlib.import_module("...")` of a forbidden module
   is reported. This is the part the submission cannot tamper with.
2. `install(forbidden, harness_dirs)` in the CHILD, before the submission is loaded: forbidden
   modules already imported by the harness are taken out of `sys.modules`, and an audit hook
   (`sys.addaudithook`, event "import") refuses any later import of them from the submission's code
   (an ImportError in the submission) and records it. This catches dynamic imports the scan cannot
   see; it runs in the submission's own process, so a submission written to subvert the harness
   could hide from it (docs/ORACLE.md, threat model) - the verdict never depends on it alone.

`notable(path)` lists calls that delegate the work to a library (torch.nn.MultiheadAttention,
F.scaled_dot_product_attention, ...), for the report: allowed, but an instructor wants to see them.
"""
from __future__ import annotations

import ast
import os
import re
import sys

from .source_text import unparsed
from .watch_scan import watches

DEFAULT_FORBIDDEN = ("npformer", "torchformer", "parity_tests")
NOTABLE = {"scaled_dot_product_attention", "MultiheadAttention", "multi_head_attention_forward",
           "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "Transformer", "LayerNorm", "layer_norm", "softmax", "Softmax",
           "Linear", "linear", "Embedding", "BertModel", "GPT2Model", "AutoModel"}


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def _matches(name: str, forbidden) -> bool:
    return any(name == f or name.startswith(f + ".") for f in forbidden)


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    """(module, line) for every import the source states, dynamic ones with a literal name too."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.module, node.lineno))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            f = node.func
            fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if fname in ("__import__", "import_module"):
                out.append((node.args[0].value, node.lineno))
    return out


_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _named(tree: ast.AST, forbidden) -> list[tuple[str, int]]:
    """(module, line) for every string constant that is, as a whole, the dotted name of a forbidden
    module (`sys.modules["parity_tests.oracle.sandbox.modes"]`: reaching the oracle's own modules,
    already loaded in the worker, without an import). A name assembled at run time escapes this;
    the worker's harness snapshot (tamper.py) sees what such code changes."""
    return [(node.value, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and len(node.value) < 200 and _DOTTED.fullmatch(node.value)
            and _matches(node.value, forbidden)]


# What only code reaching into the interpreter running it uses: the garbage collector's object
# lists, frames (its caller's locals: the harness's), tracing; a layer has no use for them.
INTROSPECTION = {"get_objects", "get_referrers", "get_referents", "_getframe", "currentframe",
                 "f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "settrace",
                 "setprofile", "_current_frames", "addaudithook"}


def _reaches(tree: ast.AST) -> list[tuple[str, int]]:
    """(what, line) for every use of INTROSPECTION, every assignment to an attribute of an
    imported module (`np.array_equal = ...`, `setattr(np, ...)`) and of a `__code__`: the
    ways code beats checks made in its own process (docs/ORACLE.md, red-team round 4)."""
    mods = {a.asname or a.name.split(".")[0] for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    out = []
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else \
            node.id if isinstance(node, ast.Name) else None
        if name in INTROSPECTION:
            out.append((name, node.lineno))
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and (t.attr == "__code__" or (
                    isinstance(t.value, ast.Name) and t.value.id in mods)):
                out.append((f"{unparsed(t) or '(...).' + t.attr} = ...", node.lineno))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "setattr" and node.args and (
                    isinstance(node.args[0], ast.Name) and node.args[0].id in mods):
            out.append((f"setattr({node.args[0].id}, ...)", node.lineno))
    return out


def _relative_files(tree: ast.AST, path: str) -> list[str]:
    """The files `from .x import y` / `from ..x import y` / `from . import x` in the file at `path`
    name (a module file, or a package's `__init__.py`), so they are scanned as siblings are."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level):
            continue
        base = os.path.dirname(os.path.abspath(path))
        for _ in range(node.level - 1):
            base = os.path.dirname(base)
        for mod in ([node.module] if node.module else [a.name for a in node.names]):
            stem = os.path.join(base, *mod.split("."))
            out += [f for f in (stem + ".py", os.path.join(stem, "__init__.py")) if os.path.isfile(f)]
    return out


MAX_SOURCE = 4 << 20       # bytes of one source file the scan reads (a larger one is refused)


class Unparsable(Exception):
    """The submission's source cannot be scanned: its own fault (load_error), never the oracle's."""


def _parse(path: str) -> ast.AST | None:
    """The module's syntax tree; None for a syntax error (the worker's import reports it, with
    the line); Unparsable for a source too large or too deeply nested to parse (a parse bomb)."""
    try:
        with open(path, "rb") as f:
            src = f.read(MAX_SOURCE + 1)
    except OSError:
        return None
    if len(src) > MAX_SOURCE:
        raise Unparsable(f"{os.path.basename(path)} is larger than {MAX_SOURCE >> 20} MiB of source")
    try:
        return ast.parse(src, filename=path)
    except (SyntaxError, ValueError):
        return None
    except (MemoryError, RecursionError) as exc:
        raise Unparsable(f"{os.path.basename(path)} is nested too deeply to parse "
                         f"({type(exc).__name__})") from None


def scan(path: str, forbidden) -> dict:
    """Static scan of the submission file and the sibling modules it imports (parent side)."""
    folder = os.path.dirname(os.path.abspath(path))
    todo, seen = [os.path.abspath(path)], set()
    imports: dict[str, str] = {}
    violations: list[str] = []
    calls: set[str] = set()
    named: list[str] = []
    reaches: list[str] = []
    watching: list[str] = []
    while todo and len(seen) < 50:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            tree = _parse(p)
        except Unparsable as exc:
            return {"imports": sorted({_top(m) for m in imports}), "violations": violations,
                    "notable_calls": sorted(calls), "unparsable": str(exc), "names_internals": named,
                    "reaches_into": reaches[:20], "watches": watching[:20],
                    "files_scanned": sorted(os.path.basename(s) for s in seen)}
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in NOTABLE:
                calls.add(node.attr)
            elif isinstance(node, ast.Name) and node.id in NOTABLE:
                calls.add(node.id)
        named += [f"{mod} ({os.path.basename(p)}:{line})" for mod, line in _named(tree, forbidden)]
        reaches += [f"{what} ({os.path.basename(p)}:{line})" for what, line in _reaches(tree)]
        watching += [f"{what} ({os.path.basename(p)}:{line})" for what, line in watches(tree)]
        for mod, line in _imports(tree):
            where = f"{os.path.basename(p)}:{line}"
            imports.setdefault(mod, where)
            if _matches(mod, forbidden):
                violations.append(f"{mod} ({where})")
            sibling = os.path.join(folder, *_top(mod).split(".")) + ".py"
            if os.path.isfile(sibling):
                todo.append(sibling)
        todo += _relative_files(tree, p)
    return {"imports": sorted({_top(m) for m in imports}), "violations": violations,
            "notable_calls": sorted(calls), "names_internals": named[:20],
            "reaches_into": reaches[:20], "watches": watching[:20],
            "files_scanned": sorted(os.path.basename(s) for s in seen)}


# ------------------------------------------------------------------------------------------------
# child side
# ------------------------------------------------------------------------------------------------
STATE = {"violations": [], "forbidden": (), "hidden": ()}


def _skip_frame(filename: str, skip_dirs) -> bool:
    return filename.startswith("<frozen importlib") or "importlib" + os.sep in filename or \
        any(filename.startswith(d) for d in skip_dirs)


# npformer's config, plain settings with no computation, stays importable for the harness after the
# reference is taken out; its field checks (npformer.guards.config, standard library only) stay with it
SETTINGS = ("npformer.models.config", "npformer.guards.config")


def install(forbidden, harness_dirs, package_dirs) -> None:
    """Child: hide forbidden modules and refuse their import from anything but the harness."""
    forbidden = tuple(forbidden)
    STATE["forbidden"] = forbidden
    if not forbidden:
        return
    for name in list(sys.modules):
        # the harness's own package stays (its modules import each other lazily); a cached
        # parity_tests import is what the static scan is for
        if _matches(name, forbidden) and _top(name) != "parity_tests" and name != SETTINGS[0]:
            del sys.modules[name]           # (npformer.models.config: see scrub)
    harness = tuple(harness_dirs)
    skip = tuple(package_dirs)
    trusted = _harness_code(harness)      # code objects, never a file name: compile() takes any

    def hook(event, args):
        if event == "exec" and args and _is_code(args[0]):
            code = args[0]
            f = sys._getframe(1)
            # a harness module imported later by the import system (its own loader, from a file
            # of the harness folder): its code is the harness's
            if code.co_filename.startswith(harness) and f is not None and \
                    f.f_code.co_filename.startswith("<frozen importlib") and \
                    _from_import_system(f, code.co_filename):
                trusted.update(id(c) for c in _all_code(code))
                _KEEP.append(code)
            return
        if event == "open" and args and isinstance(args[0], str) and STATE["hidden"]:
            path = os.path.realpath(args[0])
            for d in STATE["hidden"]:
                if path.startswith(d + os.sep):
                    STATE["violations"].append(f"{os.path.basename(d)} (reading "
                                               f"{os.path.relpath(path, os.path.dirname(d))})")
                    raise PermissionError(f"reading {args[0]!r} is not allowed in this assignment")
            return
        if event == "import" and args and isinstance(args[0], str):
            refuse(args[0])

    def refuse(name: str) -> None:
        if not _matches(name, forbidden):
            return
        f = sys._getframe(2)
        while f is not None and _skip_frame(f.f_code.co_filename, skip):
            f = f.f_back
        if f is not None and id(f.f_code) in trusted:
            return
        where = f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}" if f is not None else "?"
        STATE["violations"].append(f"{name} ({where})")
        raise ImportError(f"importing {name!r} is not allowed in this assignment")

    class Refuse:
        """First on sys.meta_path: sees every import by name, also those of a module that does
        not exist in the worker's view (importlib.import_module raises no audit event then)."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            refuse(name)
            return None

    sys.meta_path.insert(0, Refuse)
    sys.addaudithook(hook)


_KEEP: list = []      # code objects registered as the harness's (kept alive: ids stay unique)


def _is_code(o) -> bool:
    import types
    return isinstance(o, types.CodeType)


def _all_code(code) -> list:
    out, todo = [], [code]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(k for k in c.co_consts if _is_code(k))
    return out


def _harness_code(harness: tuple) -> set:
    """ids of every code object of the harness modules loaded now (functions, methods, nested)."""
    import types
    codes: list = []
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not isinstance(f, str) or not f.startswith(harness):
            continue
        todo = list(vars(mod).values())
        seen: set = set()
        while todo:
            v = todo.pop()
            if id(v) in seen:
                continue
            seen.add(id(v))
            if isinstance(v, (staticmethod, classmethod)):
                v = v.__func__
            if isinstance(v, property):
                todo += [x for x in (v.fget, v.fset, v.fdel) if x is not None]
            elif isinstance(v, types.FunctionType) and v.__module__ == mod.__name__:
                codes += _all_code(v.__code__)
            elif isinstance(v, type) and v.__module__ == mod.__name__:
                todo += list(vars(v).values())
    _KEEP.extend(codes)
    return {id(c) for c in codes}


def _from_import_system(frame, filename: str) -> bool:
    """The frame executing a module is importlib's, for a module whose spec names this file."""
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        spec = frame.f_locals.get("spec") if frame.f_code.co_name in ("_load_unlocked",
                                                                      "exec_module") else None
        module = frame.f_locals.get("module")
        origin = getattr(spec, "origin", None) or getattr(getattr(module, "__spec__", None),
                                                          "origin", None)
        if isinstance(origin, str):
            return os.path.realpath(origin) == os.path.realpath(filename)
        frame = frame.f_back
    return False


def _forbidden_object(v, forbidden) -> bool:
    """A module, class or function of a forbidden package, or an instance of such a class
    (SETTINGS, plain settings and their field checks, excepted)."""
    import types
    try:
        if isinstance(v, types.ModuleType):
            name = v.__name__
        elif isinstance(v, (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            name = getattr(v, "__module__", "")
        else:
            name = type(v).__module__
        return isinstance(name, str) and _matches(name, forbidden) and name not in SETTINGS
    except Exception:  # noqa: BLE001
        return False


def scrub(forbidden, root: str) -> list[str]:
    """Child, before the submission loads: take the reference out of this process's memory (the
    harness imported it; a submission could reach it through sys.modules or the garbage collector
    without an import) and return the folders its source lives in (to be made unreadable).
    `npformer.models.config` (plain settings, no computation) stays importable for the harness."""
    import gc

    forbidden = tuple(f for f in forbidden if _top(f) != "parity_tests")
    if not forbidden:
        return []
    dirs = set()
    for name in {_top(f) for f in forbidden}:
        dirs.update(os.path.join(p, name) for p in [root] + sys.path if isinstance(p, str) and p)
        for finder in sys.meta_path:
            try:
                spec = finder.find_spec(name, None)
            except Exception:  # noqa: BLE001
                spec = None
            if spec is not None and spec.submodule_search_locations:
                dirs.update(spec.submodule_search_locations)
            elif spec is not None and spec.origin:
                dirs.add(os.path.dirname(spec.origin))
    keep = sys.modules.get(SETTINGS[0]) if "npformer" in forbidden else None
    for name in [m for m in list(sys.modules) if _matches(m, forbidden)]:
        del sys.modules[name]
    for mname, mod in list(sys.modules.items()):
        if not mname.startswith("parity_tests") or not isinstance(getattr(mod, "__dict__", None), dict):
            continue
        d = mod.__dict__
        for k, v in list(d.items()):
            if _forbidden_object(v, forbidden):
                d[k] = None                     # the parent's copy of the harness keeps its own
    if keep is not None:        # `from npformer.models.config import X` finds it without its package
        sys.modules[SETTINGS[0]] = keep
    gc.collect()
    hidden = sorted({os.path.realpath(p) for p in dirs if os.path.isdir(p)})
    STATE["hidden"] = tuple(hidden)       # the audit hook refuses (and records) reading them
    return hidden


def reference_left(forbidden) -> int:
    """How many functions and classes of the forbidden packages this process still holds."""
    import gc
    import types
    forbidden = tuple(f for f in forbidden if _top(f) != "parity_tests")
    if not forbidden:
        return 0
    return sum(1 for o in gc.get_objects()
               if isinstance(o, (types.FunctionType, type)) and
               _matches(str(getattr(o, "__module__", "")), forbidden)
               and getattr(o, "__module__", "") not in SETTINGS)
