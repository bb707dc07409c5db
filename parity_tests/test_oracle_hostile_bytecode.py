"""What runs in the worker is the source the parent scanned: compiled code in a submission's folder
(a `__pycache__` .pyc claiming to be its source, a module that exists only as a .pyc, a compiled
extension module) is never run (sandbox/sources.py; docs/ORACLE.md, red-team round 7)."""
from __future__ import annotations

import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES

import pytest

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


def _stdlib_extension() -> str | None:
    """A small extension module of the standard library (xxlimited_35), or None if not built."""
    spec = importlib.util.find_spec("xxlimited_35")
    return None if spec is None or not spec.origin.endswith(tuple(EXTENSION_SUFFIXES)) else spec.origin


def test_a_compiled_extension_in_the_submission_folder_is_refused(tmp_path):
    ext = _stdlib_extension()
    if ext is None:
        pytest.skip("this Python has no xxlimited_35 extension to copy")
    sub = tmp_path / "student"
    sub.mkdir()
    shutil.copy(ext, sub / os.path.basename(ext))
    (sub / "attention.py").write_text(
        "import math\nimport torch\nimport xxlimited_35\n\n\n"
        "def attention(q, k, v, mask=None):\n"
        "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
        "    if mask is not None:\n"
        "        scores = scores.masked_fill(~mask.bool(), float('-inf'))\n"
        "    w = torch.softmax(scores, dim=-1)\n"
        "    return w @ v, w\n")
    res = check("sdpa", f"{sub / 'attention.py'}:attention", examples=3)
    # the attention is right, so a match means the folder's machine code was loaded unscanned
    assert res.verdict == "load_error", (res.verdict, res.message)
    assert "is a compiled extension module" in res.message, res.message


def test_the_interpreters_own_extensions_load_when_it_sits_inside_the_folder():
    """A virtual environment inside a submission's folder: its libraries are not the submission's
    (what would break: every extension under sys.prefix refused, torch's included)."""
    if _stdlib_extension() is None:
        pytest.skip("this Python has no xxlimited_35 extension to import")
    code = ("import sys\nfrom parity_tests.oracle.sandbox import sources\n"
            "assert sources.install([sys.prefix, sys.base_prefix])\n"
            "import xxlimited_35\nprint('loaded', xxlimited_35.__name__)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "loaded xxlimited_35" in r.stdout, r.stderr


def test_a_folder_inside_the_interpreters_tree_keeps_the_refusal():
    """Only an interpreter tree inside the submission's folder is exempt, not the other way round
    (a submission kept under the interpreter's prefix, or a prefix of "/", would turn it off)."""
    ext = _stdlib_extension()
    if ext is None:
        pytest.skip("this Python has no xxlimited_35 extension to import")
    code = ("import sys\nfrom parity_tests.oracle.sandbox import sources\n"
            f"assert sources.install([{os.path.dirname(ext)!r}])\n"
            "try:\n    import xxlimited_35\nexcept ImportError as e:\n    print('refused', e)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "refused" in r.stdout and "compiled extension" in r.stdout, \
        (r.stdout, r.stderr)
