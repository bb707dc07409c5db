"""The submission's modules run from their source, the text the parent scanned (policy.scan) and an
instructor reads, never from compiled bytecode beside it (worker side).

Python runs a module from `__pycache__/NAME.cpython-XY.pyc` instead of NAME.py whenever that file
says it was made from NAME.py (an "unchecked" hash-based .pyc is never compared with the source at
all), and imports a NAME.pyc that has no source. So a submission folder could hold a readable,
scanned attention.py and, in its `__pycache__`, the code that actually ran: a library call, a
reach into the worker's memory, none of it in the report (`oracle_hostile/bytecode_behind_source.py`).

`install(dirs)`, called in the worker before the submission loads, gives the import system a
source loader that compiles every .py file under `dirs` (the submission's folder, its adapter)
from its text, cached bytecode ignored, and refuses bytecode without a source there (an
ImportError naming the file). Every other module (the libraries, the harness) keeps its cache:
compiling torch from source would cost seconds per worker.
"""
from __future__ import annotations

import importlib._bootstrap_external as _external
import os
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


def install(dirs) -> bool:
    """Compile the modules under `dirs` (folders, or single files) from source; False when there
    is nothing to cover."""
    roots = tuple(os.path.normpath(os.path.abspath(d)) for d in dirs if d)
    if not roots:
        return False

    def covered(path: str) -> bool:
        p = os.path.normpath(os.path.abspath(path))
        return any(p == r or p.startswith(r + os.sep) for r in roots)

    class SourceOnly(SourceFileLoader):
        """A .py file under `dirs` compiled from its text; any other file as Python does."""

        def get_code(self, fullname):
            path = self.get_filename(fullname)
            if not covered(path):
                return super().get_code(fullname)
            return self.source_to_code(self.get_data(path), path)

    class NoBareBytecode(SourcelessFileLoader):
        """Bytecode without a source file under `dirs` refused: nothing there to scan or read."""

        def get_code(self, fullname):
            path = self.get_filename(fullname)
            if covered(path):
                raise ImportError(f"{os.path.basename(path)} is compiled Python without its source "
                                  f"file: the oracle runs a submission's modules from their .py "
                                  f"source only", name=fullname, path=path)
            return super().get_code(fullname)

    # spec_from_file_location (how the submission's own file is loaded) picks its loader class
    # from these module globals; imports through sys.path use the path hook below
    _external.SourceFileLoader = SourceOnly
    _external.SourcelessFileLoader = NoBareBytecode
    sys.path_hooks.insert(0, FileFinder.path_hook((ExtensionFileLoader, EXTENSION_SUFFIXES),
                                                  (SourceOnly, SOURCE_SUFFIXES),
                                                  (NoBareBytecode, BYTECODE_SUFFIXES)))
    sys.path_importer_cache.clear()
    return True
