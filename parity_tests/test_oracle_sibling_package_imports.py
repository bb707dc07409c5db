"""A model file importing a module of its own project from elsewhere on the path (`from
data.loader import PAD_ID`, `data/` beside `model/`), where that module imports a package the
grader lacks: the package gets a stand-in as if the model file imported it (it was a LOAD_ERROR for
every class of the file), a class that uses it is RAISED naming it, and a planted bug is a
mismatch."""
from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

SOURCE = os.path.join(os.path.dirname(__file__), "oracle_candidates", "sibling_package_imports")


@pytest.fixture
def on_path(monkeypatch, tmp_path):
    """A copy of the project outside this repository (the oracle never lets a submission import
    from a folder holding the reference), its root on PYTHONPATH as a grader running it has it;
    returns the model file."""
    project = tmp_path / "project"
    shutil.copytree(SOURCE, project)
    monkeypatch.setenv("PYTHONPATH", str(project))
    return project / "model" / "attention.py"


def test_a_missing_package_imported_by_the_projects_own_module_gets_a_stand_in(on_path):
    res = check("mha", f"{on_path}:Attention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("'dataset_tools_not_installed' is not installed" in n and "loader.py" in n
               for n in res.notes), res.notes


def test_a_class_using_the_missing_package_is_raised_naming_it(on_path):
    res = check("mha", f"{on_path}:AttentionUsingData", examples=5)
    assert res.verdict == "raised", render_text(res)
    assert "dataset_tools_not_installed" in render_text(res)


def test_a_planted_bug_beside_the_stand_in_is_a_mismatch(on_path):
    res = check("mha", f"{on_path}:AttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
