"""Submission files that import their siblings relatively (`from .scores import scaled_scores`,
`from ..attention import ...`): loaded by path they used to stop with "attempted relative import
with no known parent package". The oracle now imports such a file as a module of its folder's
package, without running that package's own `__init__` (here it imports a module that does not
exist, as a project's `__init__` pulling in its training code would). Planted bugs stay MISMATCH."""
from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.package_import import (  # noqa: E402
    anchor_folder,
    reach_hint,
    relative_depth,
)


@pytest.fixture
def package(candidate_file):
    return candidate_file("relative_imports")


def test_attention_importing_a_sibling_relatively_matches(package):
    res = check("mha", f"{package}/attention.py:SiblingImportAttention", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_the_sibling_importing_attention_is_a_mismatch(package):
    res = check("mha", f"{package}/attention.py:SiblingImportAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_layer_importing_from_the_folder_above_matches_inside_its_package_root(package):
    res = check("encoder_layer", f"{package}/blocks/encoder_block.py:ParentImportEncoderLayer",
                examples=10, package_root=package)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_the_layer_importing_from_above_is_a_mismatch(package):
    res = check("encoder_layer", f"{package}/blocks/encoder_block.py:ParentImportEncoderLayerBUG",
                examples=25, package_root=package, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_the_package_root_to_pass_is_read_from_the_relative_imports(tmp_path):
    """Two levels up: the folder named is the one the deepest import reaches, also through folders
    without __init__.py (namespace packages, as Python 3 allows); inside the package root there is
    nothing to say."""
    deep = tmp_path / "top" / "mid" / "leaf"
    deep.mkdir(parents=True)
    (deep / "layer.py").write_text("from ...parts import attention\n")
    assert f"pass --package-root {tmp_path / 'top'} " in reach_hint(str(deep / "layer.py"))
    (deep / "__init__.py").write_text("")
    (tmp_path / "top" / "mid" / "__init__.py").write_text("")
    assert f"pass --package-root {tmp_path / 'top'} " in reach_hint(str(deep / "layer.py"))
    assert reach_hint(str(deep / "layer.py"), str(tmp_path)) is None
    (deep / "near.py").write_text("from .parts import attention\n")
    assert reach_hint(str(deep / "near.py")) is None


def test_a_package_root_that_does_not_hold_the_folder_above_does_not_widen(package, tmp_path):
    """On a copy whose top folder is not a package (no __init__.py: test_oracle_own_package_roots
    covers the folder above that is one)."""
    top = tmp_path / "top"
    shutil.copytree(package, top)
    os.remove(top / "__init__.py")
    nested = f"{top}/blocks/encoder_block.py"
    assert anchor_folder(nested) is None
    assert anchor_folder(nested, str(tmp_path / "elsewhere")) is None
    assert anchor_folder(nested, f"{top}/blocks") is None
    assert anchor_folder(nested, str(top)) == str(top)
    assert anchor_folder(f"{package}/attention.py") == os.path.abspath(package)   # own folder


def test_the_folder_a_relative_import_reaches_is_read_from_the_text(package):
    assert relative_depth(f"{package}/attention.py") == 1
    assert relative_depth(f"{package}/blocks/encoder_block.py") == 2
    assert relative_depth(f"{package}/feed_forward.py") == 0
    assert anchor_folder(f"{package}/feed_forward.py") is None
    assert anchor_folder(f"{package}/blocks/encoder_block.py", package) == os.path.abspath(package)


def test_files_imported_relatively_are_scanned_for_forbidden_imports(tmp_path):
    from parity_tests.oracle.sandbox.policy import scan
    pkg = tmp_path / "pkg"
    (pkg / "inner").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "inner" / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("import npformer\n")
    (pkg / "inner" / "block.py").write_text("from ..helper import x\nfrom . import parts\n")
    (pkg / "inner" / "parts.py").write_text("import torchformer\n")
    found = scan(str(pkg / "inner" / "block.py"), ("npformer", "torchformer"))
    assert sorted(v.split()[0] for v in found["violations"]) == ["npformer", "torchformer"], found
