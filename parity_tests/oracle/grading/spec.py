"""An assignment spec (TOML): what `grade` and `gradescope-bundle` check, with which options and
points. Read with `tomllib` (Python 3.11+) or `tomli` when installed.

    [assignment]
    name = "Attention"
    entry_file = "attention.py"      # the file graded in each submission folder (or SUBMISSIONS/x.py)
    examples = 25                    # public search per check
    seed = 0
    timeout = 20                     # seconds per call
    runs = 2                         # calls per example (>= 2 catches nondeterminism)
    forbid_import = ["npformer", "torchformer", "parity_tests"]   # the default
    allow_import = []
    memory_mb = 4096                 # the worker's RLIMIT_DATA
    require = ["masks", "cross_attention", "gradients", "parameters", "eps"]   # default: all of them
                                     # what must have been compared for a match (completeness.py);
                                     # leave a name out to accept a partial comparison of it

    [[check]]
    name = "sdpa"                    # shown in the gradebook; unique
    component = "sdpa"
    entry = "attention"              # NAME in entry_file, or "other.py:NAME"
    points = 10
    options = { mask_convention = "keep" }      # any Options field (adapters.Options); a declared
                                                # mask option is never adapted (an undeclared
                                                # convention adapted to is the gap mask_convention)
    settings = { max_len = 16 }                 # --set KEY=VALUE
    hidden = { seed = 12345, examples = 50, strict = true, points = 5 }   # optional hidden search
    adapter = "adapters/sdpa_adapter.py"        # optional --adapter file, relative to this spec
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any

from ..core.completeness import REQUIREMENTS, requirements
from ..sandbox.policy import DEFAULT_FORBIDDEN
from . import spec_checks as sc
from .spec_checks import SpecError  # noqa: F401 - the spec's error, importable from here


@dataclass
class CheckSpec:
    name: str
    component: str
    entry: str
    points: float = 1.0
    options: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    hidden: dict | None = None
    adapter: str | None = None       # the adapter file as written in the spec (relative to it)
    adapter_path: str | None = None  # the same, absolute (filled by load_spec)


@dataclass
class Assignment:
    name: str = "assignment"
    entry_file: str = "submission.py"
    examples: int = 25
    seed: int = 0
    timeout: float = 20.0
    runs: int = 2
    forbid_import: list = field(default_factory=lambda: list(DEFAULT_FORBIDDEN))
    allow_import: list = field(default_factory=list)
    memory_mb: int = 4096
    require_gradients: bool | None = None   # false: drop "gradients" from `require`
    require: list = field(default_factory=lambda: list(REQUIREMENTS))
    checks: list = field(default_factory=list)
    source: str = ""                   # the spec file's path

    @property
    def max_score(self) -> float:
        return sum(c.points + float((c.hidden or {}).get("points", 0)) for c in self.checks)


def _toml_load(path: str, what: str = "--spec") -> dict:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise SpecError("reading an assignment spec needs Python 3.11+ (tomllib) or the "
                            "'tomli' package: pip install tomli") from None
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise SpecError(f"{what} {path!r}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{what} {path!r}: not valid TOML: {exc}") from None
    except (RecursionError, MemoryError):
        raise SpecError(f"{what} {path!r}: not a usable TOML file (nested too deeply)") from None
    except OSError as exc:
        raise SpecError(f"{what} {path!r}: cannot be read ({exc.strerror})") from None


def _need(cond: bool, where: str, expected: str, got: Any) -> None:
    if not cond:
        raise SpecError(f"{where}: expected {expected}, got {got!r}")


def load_spec(path: str, what: str = "--spec") -> Assignment:
    """The assignment spec at `path`, checked; `what` names the argument that gave it in errors
    (`grade --spec`, the positional `spec` of gradescope-bundle and gradescope-run)."""
    from ..components import COMPONENTS, get
    from ..reading.adapters import Options

    raw = _toml_load(path, what)
    unknown = set(raw) - {"assignment", "check"}
    _need(not unknown, f"{path}", "only [assignment] and [[check]] tables", sorted(unknown))
    a = raw.get("assignment", {})
    _need(isinstance(a, dict), "[assignment]", "a table", a)
    known = {f.name for f in fields(Assignment)} - {"checks", "source"}
    bad = set(a) - known
    _need(not bad, "[assignment]", f"keys among {sorted(known)}", sorted(bad))
    spec = Assignment(**a, source=os.path.abspath(path))
    sc.assignment(spec)
    _need(isinstance(spec.examples, int) and spec.examples > 0, "[assignment] examples",
          "a positive integer", spec.examples)
    _need(isinstance(spec.runs, int) and spec.runs >= 1, "[assignment] runs", "an integer >= 1",
          spec.runs)
    _need(isinstance(spec.timeout, (int, float)) and spec.timeout > 0, "[assignment] timeout",
          "seconds > 0", spec.timeout)
    _need(isinstance(spec.entry_file, str) and spec.entry_file.endswith(".py"),
          "[assignment] entry_file", "a file name ending in .py", spec.entry_file)
    _need(spec.require_gradients is None or isinstance(spec.require_gradients, bool),
          "[assignment] require_gradients", "true or false", spec.require_gradients)
    _need(isinstance(spec.require, list) and all(r in REQUIREMENTS for r in spec.require),
          "[assignment] require", f"a list of names among {', '.join(REQUIREMENTS)}", spec.require)
    spec.require = list(requirements(r for r in spec.require
                                     if not (r == "gradients" and spec.require_gradients is False)))
    if spec.require_gradients and "gradients" not in spec.require:
        spec.require.append("gradients")
    checks = raw.get("check", [])
    _need(isinstance(checks, list) and checks, "[[check]]", "at least one [[check]] table", checks)
    option_names = {f.name for f in fields(Options)} - {"tolerance_dtype", "shrink"}   # the oracle's own
    names = set()
    for i, c in enumerate(checks):
        where = f"[[check]] #{i + 1}"
        _need(isinstance(c, dict), where, "a table", c)
        extra = set(c) - {f.name for f in fields(CheckSpec)} | ({"adapter_path"} & set(c))
        _need(not extra, where, "keys name, component, entry, points, options, settings, hidden, "
              "adapter", sorted(extra))
        for k in ("component", "entry"):
            _need(isinstance(c.get(k), str) and c.get(k), f"{where} {k}", "a string", c.get(k))
        try:                             # a common spelling ("LayerNorm") -> the canonical name
            c["component"] = get(c["component"]).name
        except KeyError as e:
            raise SpecError(f"{where} {e.args[0]}") from None
        sc.entry(c["entry"], f"{where} entry")
        sc.need(isinstance(c.get("name", c["component"]), str), f"{where} name", "a string",
                    c.get("name"))
        cs = CheckSpec(name=c.get("name", c["component"]), component=c["component"],
                       entry=c["entry"], points=c.get("points", 1.0),
                       options=c.get("options", {}), settings=c.get("settings", {}),
                       hidden=c.get("hidden"), adapter=c.get("adapter"))
        if cs.adapter is not None:
            _need(isinstance(cs.adapter, str) and cs.adapter.endswith(".py")
                  and not os.path.isabs(cs.adapter)
                  and ".." not in cs.adapter.replace("\\", "/").split("/"),
                  f"{where} adapter", "a .py file path relative to the spec, inside its folder",
                  cs.adapter)
            cs.adapter_path = os.path.join(os.path.dirname(spec.source), cs.adapter)
            _need(os.path.isfile(cs.adapter_path), f"{where} adapter", "an existing file "
                  f"(looked for {cs.adapter_path})", cs.adapter)
        _need("adapter_path" not in cs.options, f"{where} options",
              "no adapter_path (use the check's adapter key)", cs.options)
        _need(cs.name not in names, f"{where} name", "a name no other check has", cs.name)
        names.add(cs.name)
        sc.number(cs.points, f"{where} points", 0.0, sc.MAX_POINTS)
        sc.need(isinstance(cs.options, dict), f"{where} options", "a table", cs.options)
        sc.options(cs.options, f"{where} options")
        sc.settings(cs.settings, COMPONENTS[cs.component], f"{where} settings")
        bad = set(cs.options) - option_names - {"examples", "seed", "timeout"}
        _need(not bad, f"{where} options", f"Options fields ({', '.join(sorted(option_names))})",
              sorted(bad))
        if cs.hidden is not None:
            sc.hidden(cs.hidden, f"{where} hidden")
        try:
            Options(**{**cs.options, "settings": dict(cs.settings)}).validate()
        except (TypeError, ValueError) as exc:
            raise SpecError(f"{where} options: {exc}") from None
        spec.checks.append(cs)
    return spec


def check_options(spec: Assignment, c: CheckSpec, hidden: bool = False):
    """The Options of one check (public search, or the hidden one)."""
    from ..core.options import DECLARABLE
    from ..reading.adapters import Options

    o = {"examples": spec.examples, "seed": spec.seed, "timeout": float(spec.timeout),
         **c.options, "settings": dict(c.settings), "adapter_path": c.adapter_path,
         "declared": tuple(k for k in DECLARABLE if k in c.options)}
    if hidden and c.hidden:
        o["seed"] = c.hidden.get("seed", o["seed"] + 1)
        o["examples"] = c.hidden.get("examples", o["examples"])
        o["strict"] = bool(c.hidden.get("strict", o.get("strict", False)))
    return Options(**o)
