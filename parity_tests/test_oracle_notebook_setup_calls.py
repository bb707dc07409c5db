"""A notebook exported as `.py` whose set-up cell calls a package the grader lacks
(`drive.mount(...)` after `from google.colab import drive`) or IPython's shell
(`get_ipython().system(...)`): those top-level calls are left out when the file is imported, so its
classes are checked; a class that uses the package is still RAISED naming it, and a planted bug is
MISMATCH."""
from __future__ import annotations

import ast
import importlib.util

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.notebook_calls import calls_to_leave_out

if importlib.util.find_spec("google") is not None:     # the candidate's package must be missing
    pytest.skip("google is installed here", allow_module_level=True)


@pytest.fixture
def notebook(candidate_file):
    return candidate_file("notebook_setup_calls.py")


def test_a_norm_in_a_notebook_that_mounts_a_drive_matches(notebook):
    res = check("layernorm", f"{notebook}:NotebookLayerNorm", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "left out when importing it (line(s) 9, 10)" in render_text(res), render_text(res)


def test_a_planted_bug_beside_the_mount_is_a_mismatch(notebook):
    res = check("layernorm", f"{notebook}:NotebookLayerNormBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_class_using_the_missing_package_is_raised(notebook):
    res = check("layernorm", f"{notebook}:NotebookDriveNorm", examples=5)
    assert res.verdict == "raised", render_text(res)
    assert "google" in render_text(res)


def test_only_discarded_calls_on_missing_packages_or_ipython_are_left_out():
    src = ("import numpy as np\nfrom google.colab import drive, files\n"
           "drive.mount('/content')\nuploaded = files.upload()\nnp.random.seed(0)\n"
           "get_ipython().run_line_magic('matplotlib', 'inline')\n")
    kept = calls_to_leave_out(ast.parse(src), lambda top: top == "google")
    assert [s.lineno for s in kept] == [3, 6]
