"""The submission's modules run from their source, the text the parent scanned (policy.scan) and an
instructor reads, never from compiled bytecode beside it (worker side).

Python runs a module from `__pycache__/NAME.cpython-XY.pyc` instead of NAME.py whenever that file
says it was made from NAME.py (an "unchecked" hash-based .pyc is never compared with the source at
all), and imports a NAME.pyc that has no source. So a submission folder could hold a readable,
scanned attention.py and, in its `__pycache__`, the code that actually ran: a library call, a
reach into the worker's memory, none of it in the report (`oracle_hostile/bytecode_behind_source.py`).

`install(dirs)`, called in the worker before the submission loads, gives the import system a
source loader that compiles every .py file under `dirs` (the submission's folder, its adapter)
from its text, cached bytecode ignored, and refuses bytecode without a source there and compiled
extension modules there (.so, .pyd: machine code nobody scanned); each refusal is an ImportError
naming the file. Every other module keeps its cache and its extensions: the libraries, the
harness, and whatever lies in the interpreter's own trees (a virtual environment inside the
submission's folder); compiling torch from source would cost seconds per worker.
"""
from __future__ import annotations

import hashlib
import importlib._bootstrap_external as _external
import os
import site
import stat
import sys
from importlib.machinery import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    SourceFileLoader,
    SourcelessFileLoader,
)

CODE_SUFFIXES = tuple(SOURCE_SUFFIXES + BYTECODE_SUFFIXES + EXTENSION_SUFFIXES)


def places(path: str) -> set[str]:
    """Every spelling of `path` the refusals compare: as written (normalised), with its folder's
    links resolved, and with the file's own link resolved. A leading `//`, `/proc/self/root/...`
    or a linked folder names the same file as the plain path, so each is judged as it is."""
    norm = os.path.normpath(os.path.abspath(path))
    folder, name = os.path.split(norm)
    return {norm, os.path.join(os.path.realpath(folder), name), os.path.realpath(norm)}


def _texts(frozen) -> dict[str, bytes]:
    """{path: sha256} of every module file (source, bytecode, extension) under the folders in
    `frozen` (writable copies, small)."""
    out = {}
    for top in frozen:
        for folder, _, files in os.walk(top):
            for name in files:
                path = os.path.normpath(os.path.join(folder, name))
                try:                              # a link is read through, a FIFO never opened
                    regular = stat.S_ISREG(os.stat(path).st_mode)
                except OSError:
                    regular = False
                if name.endswith(CODE_SUFFIXES) and regular:
                    with open(path, "rb") as f:
                        out[path] = hashlib.sha256(f.read()).digest()
    return out


def install(dirs, frozen=()) -> bool:
    """Compile the modules under `dirs` (folders, or single files) from source; False when there
    is nothing to cover. Under the folders in `frozen` (the submission's folder copied writable
    into the view, writable_copy.py) a module runs only with the text it had when this was
    called, before the submission loaded: one the submission wrote or changed is refused."""
    roots = tuple(os.path.normpath(os.path.abspath(d)) for d in dirs if d)
    if not roots:
        return False
    frozen = tuple(os.path.normpath(os.path.abspath(d)) for d in frozen if d)
    texts = _texts(frozen)

    # the interpreter's own trees (a virtual environment may sit inside a submission's folder):
    # the libraries installed there are not the submission's
    # (only a tree inside a submission's folder is exempt: a submission kept inside the
    # interpreter's tree, or a Python whose prefix is "/", keeps every refusal)
    def under(p: str, tops) -> bool:
        return any(p == t or p.startswith(t + os.sep) for t in tops)

    libs = tuple(t for t in {os.path.normpath(os.path.abspath(d)) for d in
                             (sys.prefix, sys.base_prefix, sys.exec_prefix,
                              *site.getsitepackages(), site.getusersitepackages()) if d}
                 if under(t, roots))

    def covered(path: str) -> bool:
        return any(under(p, roots) and not under(p, libs) for p in places(path))

    def changed(path: str, data: bytes) -> bool:
        """A file under a writable copy whose bytes are not those it had before the submission
        loaded (or that was not there), under any spelling of its path."""
        keys = [p for p in places(path) if under(p, frozen)]
        digest = hashlib.sha256(data).digest()
        return bool(keys) and not any(texts.get(k) == digest for k in keys)

    def written(path: str, fullname: str) -> ImportError:
        return ImportError(f"{os.path.basename(path)} was written or changed by the submission "
                           f"while it ran: the oracle runs a submission's modules with the text "
                           f"it read", name=fullname, path=path)

    class SourceOnly(SourceFileLoader):
        """A .py file under `dirs` compiled from its text; any other file as Python does."""

        def get_code(self, fullname):
            path = self.get_filename(fullname)
            if not covered(path) and not any(under(p, frozen) for p in places(path)):
                return super().get_code(fullname)
            data = self.get_data(path)
            if changed(path, data):
                raise written(path, fullname)
            return self.source_to_code(data, path)

    class NoBareBytecode(SourcelessFileLoader):
        """Bytecode without a source file under `dirs` refused: nothing there to scan or read."""

        def get_code(self, fullname):
            path = self.get_filename(fullname)
            if covered(path):
                raise ImportError(f"{os.path.basename(path)} is compiled Python without its source "
                                  f"file: the oracle runs a submission's modules from their .py "
                                  f"source only", name=fullname, path=path)
            return super().get_code(fullname)

        def get_data(self, path):          # the bytes get_code runs, compared where they are read
            data = super().get_data(path)
            if path.endswith(tuple(BYTECODE_SUFFIXES)) and changed(path, data):
                raise written(path, self.name)
            return data

    class NoExtension(ExtensionFileLoader):
        """A compiled extension module (.so, .pyd) under `dirs` refused: machine code the scan
        cannot read; the libraries' extensions load as usual."""

        def create_module(self, spec):
            if covered(self.path):
                raise ImportError(f"{os.path.basename(self.path)} is a compiled extension module: "
                                  f"the oracle runs a submission's modules from their .py source "
                                  f"only", name=spec.name, path=self.path)
            if any(under(p, frozen) for p in places(self.path)):   # the libraries' not read
                with open(self.path, "rb") as f:
                    if changed(self.path, f.read()):
                        raise written(self.path, spec.name)
            return super().create_module(spec)

    # spec_from_file_location (how the submission's own file is loaded) picks its loader class
    # from these module globals; imports through sys.path use the path hook below
    _external.SourceFileLoader = SourceOnly
    _external.SourcelessFileLoader = NoBareBytecode
    _external.ExtensionFileLoader = NoExtension
    sys.path_hooks.insert(0, FileFinder.path_hook((NoExtension, EXTENSION_SUFFIXES),
                                                  (SourceOnly, SOURCE_SUFFIXES),
                                                  (NoBareBytecode, BYTECODE_SUFFIXES)))
    sys.path_importer_cache.clear()
    return True
