"""Source that looks at what runs it: the parent's static scan for the tells a submission could use
to tell the oracle's run from its author's own (docs/ORACLE.md, red-team round 11).

Its module name (`__name__` outside the `if __name__ == "__main__"` idiom and `getLogger(__name__)`,
`__spec__`, `__file__`),
the command line (`sys.argv`, `sys.orig_argv`, `sys.flags`), the environment (`os.environ`,
`os.getenv`), the caller's stack (`inspect.stack`, `traceback.extract_stack`; frames themselves are
policy.INTROSPECTION), the modules loaded (`sys.modules`), the working directory, process and host
(`os.getcwd`, `os.getpid`, `/proc/...`, the user and host names). A layer has no use for any of them;
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
           "uname", "getuid"},
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


def watches(tree: ast.AST) -> list[tuple[str, int]]:
    alias: dict[str, str] = {}            # local name -> module, for `import os as o`
    bare: dict[str, str] = {}             # local name -> "module.attr", for `from os import environ`
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name in TELLS:
                    alias[a.asname or a.name] = a.name
        elif isinstance(n, ast.ImportFrom) and n.module in TELLS and not n.level:
            for a in n.names:
                if a.name in TELLS[n.module]:
                    bare[a.asname or a.name] = f"{n.module}.{a.name}"
    idiom = {id(s) for n in ast.walk(tree) if isinstance(n, ast.Compare) and _main_idiom(n)
             for s in (n.left, *n.comparators)}
    idiom |= {id(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call) and _logger_name(n)}
    out: list[tuple[str, int, int]] = []
    for n in ast.walk(tree):
        what = None
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and \
                alias.get(n.value.id) in TELLS and n.attr in TELLS[alias[n.value.id]]:
            what = f"{alias[n.value.id]}.{n.attr}"
        elif isinstance(n, ast.Name) and n.id in bare:
            what = bare[n.id]
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
