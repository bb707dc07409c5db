"""A NumPy project kept in folders without `__init__.py` (namespace packages), whose files import
each other relatively: the candidate's file reaches only its own folder (`from ._base import
Dense`), but the sibling it imports reaches the folder above (`from ..engine import Param`). The
folder reached is read through those sibling files. When it lies in a folder on the oracle's
PYTHONPATH (which the worker sees anyway) the file loads without --package-root; elsewhere the
load error names the --package-root to pass. A second layer without bias is found absent although
each parameter object keeps a `.grad` beside its value. Planted bug: MISMATCH."""
from __future__ import annotations

import os
import shutil

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.package_import import reach_hint, reached_folder


@pytest.fixture
def project(candidate_file, tmp_path):
    """A copy outside the repository (the oracle never widens a view to a folder holding itself)."""
    top = tmp_path / "src" / "npnet"
    shutil.copytree(candidate_file("namespace_layers"), top)
    return top


def test_the_folder_a_sibling_import_reaches_counts_as_the_files(project):
    ff = str(project / "layers" / "feed_forward.py")
    assert reached_folder(ff) == str(project)
    assert reached_folder(str(project / "engine.py")) is None
    assert f"pass --package-root {project} " in reach_hint(ff)
    assert reach_hint(ff, str(project)) is None


def test_a_feed_forward_on_the_oracles_pythonpath_loads_and_matches(project, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(project.parent))
    res = check("ffn", f"{project}/layers/feed_forward.py:TwoLayerFeedForward", examples=8)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "the candidate has no linear2.bias" in text, text


def test_a_planted_bug_in_the_namespace_feed_forward_is_a_mismatch(project, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(project.parent))
    res = check("ffn", f"{project}/layers/feed_forward.py:TwoLayerFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_off_the_pythonpath_the_load_error_names_the_package_root(project, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    res = check("ffn", f"{project}/layers/feed_forward.py:TwoLayerFeedForward", examples=3)
    assert res.verdict == "load_error", render_text(res)
    assert f"pass --package-root {project} " in render_text(res), render_text(res)
    res = check("ffn", f"{project}/layers/feed_forward.py:TwoLayerFeedForward", examples=6,
                package_root=str(project))
    assert res.verdict == "match", render_text(res)
    assert os.path.isdir(project)
