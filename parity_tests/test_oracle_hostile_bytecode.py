"""What runs in the worker is the source the parent scanned: compiled bytecode in a submission's
folder (a `__pycache__` .pyc claiming to be its source, a module that exists only as a .pyc) is
never run (sandbox/sources.py; docs/ORACLE.md, red-team round 7)."""
from __future__ import annotations

import importlib.util
import os
import py_compile
import shutil

from parity_tests.oracle import check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")


def _hidden(name: str, folder) -> str:
    """The HIDDEN source of hostile file `name`, written to a file of its own in `folder`."""
    spec = importlib.util.spec_from_file_location("hidden_text", os.path.join(HOSTILE, name))
    text = spec.loader.get_source("hidden_text").split("HIDDEN = '''", 1)[1].split("'''", 1)[0]
    path = os.path.join(folder, "hidden_source.py")
    with open(path, "w") as f:
        f.write(text)
    return path


def test_bytecode_cached_beside_the_source_is_not_what_runs(tmp_path):
    sub = tmp_path / "student"
    sub.mkdir()
    src = str(sub / "attention.py")
    shutil.copy(os.path.join(HOSTILE, "bytecode_behind_source.py"), src)
    # a .pyc Python takes for attention.py's without comparing them (an unchecked hash)
    py_compile.compile(_hidden("bytecode_behind_source.py", tmp_path),
                       cfile=importlib.util.cache_from_source(src), dfile=src, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    res = check("sdpa", f"{src}:attention", examples=3)
    # the scanned source is right; the bytecode's output is twice the reference: a mismatch (or
    # a report free of its library call and gc use) would mean the bytecode ran
    assert res.verdict == "match", res.message


def test_a_module_that_exists_only_as_bytecode_is_refused(tmp_path):
    sub = tmp_path / "student"
    sub.mkdir()
    src = str(sub / "attention.py")
    shutil.copy(os.path.join(HOSTILE, "bytecode_only_module.py"), src)
    py_compile.compile(_hidden("bytecode_only_module.py", tmp_path),
                       cfile=str(sub / "attention_impl.pyc"), doraise=True)
    res = check("sdpa", f"{src}:attention", examples=3)
    assert res.verdict != "match"
    assert "attention_impl.pyc is compiled Python without its source" in res.message, res.message
