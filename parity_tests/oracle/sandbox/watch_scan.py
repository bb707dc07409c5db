"""Source that looks at what runs it: the parent's static scan for the tells a submission could use
to tell the oracle's run from its author's own (docs/ORACLE.md, red-team round 11).

Its module name (`__name__` outside the `if __name__ == "__main__"` idiom and `getLogger(__name__)`,
`__spec__`, `__file__`),
the command line (`sys.argv`, `sys.orig_argv`, `sys.flags`), the environment (`os.environ`,
`os.getenv`), the caller's stack (`inspect.stack`, `traceback.extract_stack`; frames themselves are
policy.INTROSPECTION), the modules loaded (`sys.modules`), the working directory, process and host
(`os.getcwd`, `os.getpid`, `/proc/...`, the user and host names), and the facts of a confined
process (its thread and CPU counts, `resource.getrlimit`, the threads running beside it, an empty
working directory read with `os.listdir` or `Path.cwd()`, the global random state; red-team round
14), through dotted names too (`np.random.get_state`, `Path.cwd`). A layer has no use for any of them;
code reading them may compute something else when it thinks it is graded (or when it thinks it is
not). The oracle cannot hide all of them while the harness runs in the worker's interpreter
(round 9), so the report names each use, file and line, for a reader: no verdict depends on it.

    watches(tree) -> [(what, line)]
"""
from __future__ import annotations

import ast

TELLS = {
    "sys": {"modules", "argv", "orig_argv", "flags", "_xoptions"},
    "os": {"environ", "environb", "getenv", "getcwd", "getcwdb", "getpid", "getppid", "getlogin",
           "uname", "getuid", "cpu_count", "process_cpu_count", "sched_getaffinity", "listdir",
           "scandir", "getloadavg"},
    "resource": {"getrlimit", "prlimit", "getrusage"},
    "threading": {"enumerate", "active_count"},
    "multiprocessing": {"cpu_count"},
    "pathlib": {"Path.cwd", "Path.home"},
    "random": {"getstate"},
    "numpy.random": {"get_state"},
    "torch": {"get_num_threads", "get_num_interop_threads", "initial_seed"},
    "inspect": {"stack", "getouterframes", "getframeinfo", "trace", "getmodule"},
    "traceback": {"extract_stack", "format_stack", "walk_stack", "print_stack"},
    "getpass": {"getuser"},
    "socket": {"gethostname"},
    "platform": {"node", "uname"},
}
DUNDERS = {"__spec__", "__file__", "__loader__"}
MAX = 20


def _main_idiom(node: ast.Compare) -> bool:
    """`__name__ == "__main__"` (either side): a script's own entry point, no tell."""
    sides = [node.left, *node.comparators]
    return any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def _logger_name(node: ast.Call) -> bool:
    """`logging.getLogger(__name__)` (or a bare `getLogger(__name__)`): the usual logger, no tell."""
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    return name == "getLogger" and len(node.args) == 1 and not node.keywords and \
        isinstance(node.args[0], ast.Name) and node.args[0].id == "__name__"


def _origins(tree: ast.AST) -> dict[str, str]:
    """Each name an import binds -> the dotted name it stands for (`import os as o`: o -> os;
    `import numpy.random`: numpy -> numpy; `from os import environ as E`: E -> os.environ)."""
    names: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            for a in n.names:
                names[a.asname or a.name] = f"{n.module}.{a.name}"
    return names


def _told(dotted: str) -> bool:
    """Whether a dotted name is one of TELLS (`numpy.random.get_state`: module numpy.random)."""
    parts = dotted.split(".")
    return any(".".join(parts[i:]) in TELLS.get(".".join(parts[:i]), ()) for i in range(1, len(parts)))


def _dotted(node: ast.AST, origins: dict[str, str]) -> str | None:
    """The dotted name an attribute chain (or a bare name) rooted at an imported name stands for."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in origins:
        return None
    return ".".join([origins[node.id], *reversed(attrs)])


def watches(tree: ast.AST) -> list[tuple[str, int]]:
    origins = _origins(tree)
    idiom = {id(s) for n in ast.walk(tree) if isinstance(n, ast.Compare) and _main_idiom(n)
             for s in (n.left, *n.comparators)}
    idiom |= {id(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call) and _logger_name(n)}
    out: list[tuple[str, int, int]] = []
    for n in ast.walk(tree):
        what = None
        dotted = _dotted(n, origins) if isinstance(n, (ast.Attribute, ast.Name)) else None
        if dotted is not None and _told(dotted):
            what = dotted
        elif isinstance(n, ast.Name) and (n.id in DUNDERS or n.id == "__name__") and \
                id(n) not in idiom and isinstance(n.ctx, ast.Load):
            what = n.id
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and \
                n.value.startswith("/proc/") and len(n.value) < 200:
            what = repr(n.value)
        if what is not None:
            out.append((what, n.lineno, n.col_offset))
            if len(out) >= MAX:
                break
    return [(w, line) for w, line, _ in sorted(out, key=lambda x: x[1:])]
