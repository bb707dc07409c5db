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
import sys

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


def _parse(path: str) -> ast.AST | None:
    try:
        with open(path, "rb") as f:
            src = f.read(4 << 20)
        return ast.parse(src, filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def scan(path: str, forbidden) -> dict:
    """Static scan of the submission file and the sibling modules it imports (parent side)."""
    folder = os.path.dirname(os.path.abspath(path))
    todo, seen = [os.path.abspath(path)], set()
    imports: dict[str, str] = {}
    violations: list[str] = []
    calls: set[str] = set()
    while todo and len(seen) < 50:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        tree = _parse(p)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in NOTABLE:
                calls.add(node.attr)
            elif isinstance(node, ast.Name) and node.id in NOTABLE:
                calls.add(node.id)
        for mod, line in _imports(tree):
            where = f"{os.path.basename(p)}:{line}"
            imports.setdefault(mod, where)
            if _matches(mod, forbidden):
                violations.append(f"{mod} ({where})")
            sibling = os.path.join(folder, *_top(mod).split(".")) + ".py"
            if os.path.isfile(sibling):
                todo.append(sibling)
    return {"imports": sorted({_top(m) for m in imports}), "violations": violations,
            "notable_calls": sorted(calls), "files_scanned": sorted(os.path.basename(s) for s in seen)}


# ------------------------------------------------------------------------------------------------
# child side
# ------------------------------------------------------------------------------------------------
STATE = {"violations": [], "forbidden": ()}


def _skip_frame(filename: str, skip_dirs) -> bool:
    return filename.startswith("<frozen importlib") or "importlib" + os.sep in filename or \
        any(filename.startswith(d) for d in skip_dirs)


def install(forbidden, harness_dirs, package_dirs) -> None:
    """Child: hide forbidden modules and refuse their import from anything but the harness."""
    forbidden = tuple(forbidden)
    STATE["forbidden"] = forbidden
    if not forbidden:
        return
    for name in list(sys.modules):
        # the harness's own package stays (its modules import each other lazily); a cached
        # parity_tests import is what the static scan is for
        if _matches(name, forbidden) and _top(name) != "parity_tests":
            del sys.modules[name]
    harness = tuple(harness_dirs)
    skip = tuple(package_dirs)

    def hook(event, args):
        if event != "import" or not args or not isinstance(args[0], str):
            return
        name = args[0]
        if not _matches(name, forbidden):
            return
        f = sys._getframe(1)
        while f is not None and _skip_frame(f.f_code.co_filename, skip):
            f = f.f_back
        if f is not None and f.f_code.co_filename.startswith(harness):
            return
        where = f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}" if f is not None else "?"
        STATE["violations"].append(f"{name} ({where})")
        raise ImportError(f"importing {name!r} is not allowed in this assignment")

    sys.addaudithook(hook)
