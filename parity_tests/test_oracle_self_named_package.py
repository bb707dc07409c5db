"""A file importing its own package absolutely (`from ffnpkg.parts import relu` in ffnpkg/block.py)
while its folder also holds a module of the package's name (ffnpkg/ffnpkg.py): the file's folder
goes last on the worker's sys.path, so the package, not that module, is imported, and the
feed-forward is checked (it raised "'ffnpkg' is not a package" at load). A planted missing
activation stays MISMATCH."""
from __future__ import annotations

import shutil

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def block(candidate_file, monkeypatch, tmp_path):
    # outside the project, on PYTHONPATH, as a user's checkout would be (the oracle never lets a
    # submission import from a folder holding the project)
    shutil.copytree(candidate_file("self_named_package", "ffnpkg"), tmp_path / "ffnpkg")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return str(tmp_path / "ffnpkg" / "block.py")


def test_a_file_importing_its_own_package_beside_a_same_named_module_loads_and_matches(block):
    res = check("ffn", f"{block}:FeedForward", examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_planted_missing_activation_in_a_self_named_package_is_a_mismatch(block):
    res = check("ffn", f"{block}:FeedForward_BUG", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
