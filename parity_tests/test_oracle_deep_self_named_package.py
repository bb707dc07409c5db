"""A file importing its project's package absolutely (`from mlppkg.model.parts import relu` in
mlppkg/model/block.py) while its folder holds a module of the package's name
(mlppkg/model/mlppkg.py, the whole model in a `src/` layout): the file's folder goes last on the
worker's sys.path, so the package, not that module, is imported, and the feed-forward is checked
(it was a LOAD_ERROR, "'mlppkg' is not a package"). A planted missing activation stays MISMATCH."""
from __future__ import annotations

import shutil

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.package_import import shadows_own_package


@pytest.fixture
def block(candidate_file, monkeypatch, tmp_path):
    # outside the project, on PYTHONPATH, as a user's checkout would be (the oracle never lets a
    # submission import from a folder holding the project)
    shutil.copytree(candidate_file("self_named_package", "mlppkg"), tmp_path / "mlppkg")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return str(tmp_path / "mlppkg" / "model" / "block.py")


def test_a_module_named_like_the_package_deeper_in_it_is_seen_as_a_shadow(block):
    assert shadows_own_package(block)


def test_a_file_beside_a_module_named_like_its_deeper_package_loads_and_matches(block):
    res = check("ffn", f"{block}:FeedForward", examples=8)
    assert res.verdict == "match", render_text(res)


def test_its_planted_missing_activation_is_a_mismatch(block):
    res = check("ffn", f"{block}:FeedForward_BUG", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
