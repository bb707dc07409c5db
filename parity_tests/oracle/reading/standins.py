"""Stand-ins for third-party modules a submission imports but the grader does not have installed.

Real files import more than their components use: an editor's automatic import left behind (`from
cffi.model import attach_exception_info`, `from Cython.Compiler.Options import embed`, never used),
a library wanted by one helper only (`from scipy.special import erf` for the exact GELU), plotting
and progress bars at the top of a notebook export (`import matplotlib.pyplot as plt`). Importing
such a file stops on the missing module, so none of its components can be checked.

When importing the submission raises ModuleNotFoundError, and
- the missing module's top-level package is not installed at all (`importlib.util.find_spec` finds
  nothing: a missing submodule of an installed package is left as the error it is),
- the statement that raised is an `import` / `from ... import` in a file of the submission's own
  (the innermost frame of the traceback): one in its folder, or a module of its own it imports
  from elsewhere on the path (`from data.data_handler import PAD` in `model/transformer.py`, the
  data module importing `pandas`), never a file of the interpreter, of an installed library or of
  this project,
- and it is not one of this project's packages (those the sandbox refuses with an ImportError
  anyway),
that package (and every submodule of it) is imported as a stand-in, and the import is tried again.
A stand-in computes nothing: calling it, reading a value from it, using it in arithmetic, as a
truth value or as an array raises ModuleNotFoundError naming the package, so a candidate that needs
it is RAISED with that message, and one that does not is checked as written. Used as a base class
(`class LitGPT(L.LightningModule)`, a training wrapper beside the model), it gives a placeholder
class whose instances cannot be made: the class statement runs, so the file's other classes load,
and building that class (or any class deriving from it) raises the same ModuleNotFoundError.
The stand-in finder sits last on `sys.meta_path` (it never hides an installed module), answers only
imports written in the submission's folder (a library's own optional `import scipy` still fails as
it expects), and its modules leave `sys.modules` once the submission is imported (the submission
keeps what it bound); it exists only in the worker that loads the submission. Each stand-in is
named in the report.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
import traceback
from types import ModuleType
from typing import Callable

PROJECT = ("npformer", "torchformer", "parity_tests")
MAX_STANDINS = 8


def _message(name: str, top: str) -> str:
    return (f"{name!r} comes from {top!r}, which is not installed where the oracle runs: its import "
            f"was let through with a stand-in, and the candidate used it")


# The refusal is compiled under a file name of its own, outside the oracle's folder: the error
# it raises is the candidate's (it used a package it does not have, RAISED), not the oracle's.
_REFUSE = """
def refuse(self, *args, **kwargs):
    raise ModuleNotFoundError(message(self._standin_name, self._standin_top), name=self._standin_top)
"""
_REFUSE_NEW = """
def refuse_new(cls, *args, **kwargs):
    raise ModuleNotFoundError(message(cls._standin_name, cls._standin_top), name=cls._standin_top)
"""
_SPACE: dict = {"message": _message}
exec(compile(_REFUSE_NEW, "<stand-in for a package not installed>", "exec"), _SPACE)  # noqa: S102
exec(compile(_REFUSE, "<stand-in for a package not installed>", "exec"), _SPACE)  # noqa: S102


class StandIn:
    """What `from missing.module import name` binds: any use raises ModuleNotFoundError."""

    __slots__ = ("_standin_name", "_standin_top")
    __array_ufunc__ = None          # numpy hands `array + stand_in` to the stand-in, which refuses
    _refuse = _SPACE["refuse"]

    def __init__(self, name: str, top: str):
        object.__setattr__(self, "_standin_name", name)
        object.__setattr__(self, "_standin_top", top)

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StandIn(f"{self._standin_name}.{attr}", self._standin_top)

    __setattr__ = _refuse

    def __repr__(self) -> str:
        return f"<stand-in for {self._standin_name}: {self._standin_top!r} is not installed>"

    def __mro_entries__(self, bases):
        """As a base class: a placeholder whose instances cannot be made (see the module docstring)."""
        return (_placeholder_base(self._standin_name, self._standin_top),)

    __call__ = __bool__ = __iter__ = __len__ = __getitem__ = __setitem__ = __contains__ = _refuse
    __float__ = __int__ = __index__ = __array__ = __enter__ = _refuse
    __neg__ = __pos__ = __abs__ = __invert__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __matmul__ = __rmatmul__ = _refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __pow__ = __rpow__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse


def _placeholder_base(name: str, top: str) -> type:
    """A class named after the missing one; making an instance of it or of a subclass raises."""
    return type(name.rpartition(".")[2] or name, (), {
        "_standin_name": name, "_standin_top": top, "__new__": _SPACE["refuse_new"],
        "__module__": name.rpartition(".")[0] or top,
        "__doc__": f"placeholder for {name}: {top!r} is not installed where the oracle runs"})


class StandInModule(ModuleType):
    """A missing package or one of its submodules: its attributes are StandIns."""

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StandIn(f"{self.__name__}.{attr}", self.__name__.partition(".")[0])


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: stand-in modules for the packages in `tops`, for imports written in
    the submission's folders only (a library's own optional import still fails as it expects)."""

    def __init__(self) -> None:
        self.tops: dict[str, str] = {}          # package -> the import statement that wanted it
        self.folders: set[str] = set()          # the submission's folders

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in self.tops or not self._asked_by_submission():
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def _asked_by_submission(self) -> bool:
        """The frame that started this import (past the import machinery) is the submission's."""
        frame = sys._getframe(1)
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith("<") or name == __file__ or \
                    os.path.basename(os.path.dirname(name)) == "importlib":
                frame = frame.f_back
                continue
            return any(_inside(name, folder) for folder in self.folders)
        return False

    def create_module(self, spec):
        module = StandInModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        return None


FINDER = _Finder()


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _installed(path: str) -> bool:
    """A file of the interpreter, of an installed library, or of this project."""
    roots = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix}
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # parity_tests
    parts = os.path.abspath(path).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts or \
        any(r and _inside(path, r) for r in roots) or \
        any(_inside(path, os.path.join(os.path.dirname(here), p)) for p in PROJECT)


def _own_file(path: str, folder: str) -> bool:
    return _inside(path, folder) or (os.path.isfile(path) and not _installed(path))


def missing_package(exc: BaseException, folder: str) -> tuple[str, str, str] | None:
    """(package, where, the folder of the file that imported it) when `exc` is a
    ModuleNotFoundError a stand-in may answer (see the module docstring); None otherwise."""
    if type(exc) is not ModuleNotFoundError or not getattr(exc, "name", None):
        return None
    top = str(exc.name).partition(".")[0]
    if not top or top in PROJECT or top in FINDER.tops:
        return None
    try:
        if importlib.util.find_spec(top) is not None:
            return None
    except (ImportError, ValueError):
        return None
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    if not frames or not _own_file(frames[-1].filename, folder):
        return None
    line = (frames[-1].line or "").split("#")[0].strip()
    if not line.startswith(("import ", "from ")):
        return None
    return top, f"`{line}` ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})", \
        os.path.dirname(os.path.abspath(frames[-1].filename))


def import_with_standins(do_import: Callable[[], ModuleType], folder: str) -> tuple[ModuleType, list[str]]:
    """do_import(), again after each missing third-party package it stopped on got a stand-in
    (at most MAX_STANDINS); returns the module and a note per stand-in. Any other failure raises
    as it came."""
    notes: list[str] = []
    try:
        while True:
            try:
                return do_import(), notes
            except ModuleNotFoundError as exc:
                found = missing_package(exc, folder)
                if found is None or len(notes) >= MAX_STANDINS:
                    raise
                top, where, asked_in = found
                FINDER.tops[top] = where
                FINDER.folders.update({os.path.abspath(folder), asked_in})
                if FINDER not in sys.meta_path:
                    sys.meta_path.append(FINDER)
                notes.append(f"{top!r} is not installed where the oracle runs: {where} was let "
                             f"through with a stand-in that raises if used (a candidate that needs "
                             f"it is RAISED naming it; one that does not is checked as written)")
    finally:        # the submission holds what it imported; a library's later import finds nothing
        for name in [n for n, m in sys.modules.items() if isinstance(m, StandInModule)]:
            del sys.modules[name]
