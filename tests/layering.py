"""The import rule of npformer and torchformer, read from the source (nothing is imported).

Each twin is a stack of floors, lowest first (docs/ARCHITECTURE.md):

    layers -> models -> guards -> checks -> optim -> fast -> data -> decoding -> io -> training -> cli

A file may import from its own floor or a lower one, in its own package or (torchformer only) in
npformer; npformer names torchformer in exactly one file, the CLI's backend registry. Every import
counts: module-level, inside functions, and `importlib.import_module` / `__import__` calls whose module
name is a string constant (or a choice between constants). Three more rules: no cycle between files,
and no private name (`_x`) imported from another module.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

FLOORS = ("layers", "models", "guards", "checks", "optim", "fast", "data", "decoding", "io", "training", "cli")
PACKAGES = ("npformer", "torchformer")
# the one npformer file allowed to name torchformer (it picks a backend for the command line)
BACKEND_REGISTRY = "npformer.cli.backends"
TOP = len(FLOORS)                     # a package's own __init__ / __main__: above every floor


@dataclass(frozen=True)
class Violation:
    rule: str                         # "upward", "cycle", "private", "torchformer"
    where: str                        # "module:line"
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.where}: {self.detail}"


def module_files(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the packages under `root`."""
    out = {}
    for pkg in packages:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


def floor(module: str) -> int:
    """The rank of a module's floor (TOP for a package's top-level files)."""
    parts = module.split(".")
    return FLOORS.index(parts[1]) if len(parts) > 1 and parts[1] in FLOORS else TOP


def _constants(node) -> list[str]:
    """The string constants an import call's module argument can take."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _constants(node.body) + _constants(node.orelse)
    return []


def _imports(module: str, tree: ast.AST, is_package: bool):
    """(line, target dotted name, imported name or None) for every import in a module."""
    base = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, None
        elif isinstance(node, ast.ImportFrom):
            src = node.module or ""
            if node.level:
                anchor = base.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                src = ".".join(anchor + ([src] if src else []))
            for a in node.names:
                yield node.lineno, src, a.name
        elif isinstance(node, ast.Call) and node.args:
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name in ("import_module", "__import__"):
                for s in _constants(node.args[0]):
                    yield node.lineno, s, None


def _resolve(target: str, name: str | None, modules: dict[str, Path]) -> str | None:
    """The module file an import reaches (`from pkg import mod` reaches pkg.mod), or None if outside."""
    if name and f"{target}.{name}" in modules:
        return f"{target}.{name}"
    parts = target.split(".")
    while parts:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return None


def check(root: Path) -> list[Violation]:
    """Every break of the import rule under `root` (empty when the rule holds)."""
    modules = module_files(root)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    out: list[Violation] = []
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, target, name in _imports(mod, tree, path.name == "__init__.py"):
            dest = _resolve(target, name, modules)
            if dest is None or dest == mod:
                continue
            where = f"{mod}:{line}"
            edges[mod].add(dest)
            src_pkg, dest_pkg = mod.split(".")[0], dest.split(".")[0]
            if src_pkg == "npformer" and dest_pkg == "torchformer" and mod != BACKEND_REGISTRY:
                out.append(Violation("torchformer", where, f"npformer imports {dest}; only "
                                     f"{BACKEND_REGISTRY} may name torchformer"))
            elif floor(dest) > floor(mod):
                out.append(Violation("upward", where, f"imports {dest} (floor "
                                     f"{_floor_name(dest)}) from floor {_floor_name(mod)}"))
            if name and name.startswith("_") and not name.startswith("__") and dest != mod:
                out.append(Violation("private", where, f"imports private name {name} from {dest}"))
    for group in cycles(edges):
        path = cycle_path(group[0], set(group), edges)
        out.append(Violation("cycle", group[0], " -> ".join(path) + f"  ({len(group)} files in the "
                             f"cycle: {', '.join(group)})"))
    return out


def cycle_path(start: str, group: set[str], edges: dict[str, set[str]]) -> list[str]:
    """The shortest import path from `start` back to itself inside a strongly connected group."""
    parent = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(edges[node] & group):
            if child == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if child not in parent:
                parent[child] = node
                queue.append(child)
    return [start]


def _floor_name(module: str) -> str:
    r = floor(module)
    return FLOORS[r] if r < TOP else "top"


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one file (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.append(w)
                        if w == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def private_imports(root: Path, packages) -> list[Violation]:
    """Only the private-name rule, for packages outside the twins' floors (benchmarks): every
    `from a.module import _name` of one of their files from another of their files."""
    modules = module_files(root, packages)
    out: list[Violation] = []
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, target, name in _imports(mod, tree, path.name == "__init__.py"):
            dest = _resolve(target, name, modules)
            if dest not in (None, mod) and name and name.startswith("_") \
                    and not name.startswith("__"):
                out.append(Violation("private", f"{mod}:{line}",
                                     f"imports private name {name} from {dest}"))
    return out
