"""Files importing from the folder above (`from ..transformer_layers import *`, CS231n's decoder
layer) inside a package of their own: when that folder holds an `__init__.py` (the file's own
folder may be a namespace package without one, as Python 3 allows), the natural command lets the
worker see that folder (the package the file belongs to) without `--package-root`, and says so.
A folder above that is not a package (a grader's folder of submissions) still needs the flag; so
does anything two levels up. Planted bug: MISMATCH."""
from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def package(candidate_file):
    return os.path.abspath(candidate_file("captioning_package"))


def test_a_decoder_layer_star_importing_its_package_above_matches_without_a_flag(package):
    res = check("decoder_layer", f"{package}/classifiers/transformer.py:CaptionDecoderLayer",
                examples=10)
    assert res.verdict == "match", render_text(res)
    assert f"imports reach {package!r}, the package it belongs to" in render_text(res)


def test_a_file_in_a_namespace_folder_of_its_package_matches_without_a_flag(package, tmp_path):
    top = tmp_path / "captioning"
    shutil.copytree(package, top)
    os.remove(top / "classifiers" / "__init__.py")         # classifiers/: a namespace package
    res = check("decoder_layer", f"{top}/classifiers/transformer.py:CaptionDecoderLayer", examples=6)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_the_decoder_layer_of_its_own_package_is_a_mismatch(package):
    res = check("decoder_layer", f"{package}/classifiers/transformer.py:CaptionDecoderLayerBUG",
                examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_folder_above_that_is_not_a_package_is_not_seen_without_the_flag(package, tmp_path):
    """The same files with the top `__init__.py` left out (as a grader's folder holding submissions
    has none): the import from above fails and the error names the flag to pass."""
    top = tmp_path / "submissions"
    shutil.copytree(package, top)
    os.remove(top / "__init__.py")
    res = check("decoder_layer", f"{top}/classifiers/transformer.py:CaptionDecoderLayer", examples=3)
    assert res.verdict == "load_error", render_text(res)
    assert f"pass --package-root {top} " in render_text(res), render_text(res)


def test_only_one_level_up_and_only_through_packages_is_found(tmp_path):
    from parity_tests.oracle.reading.package_import import anchor_folder, own_package_root
    deep = tmp_path / "top" / "mid" / "leaf"
    deep.mkdir(parents=True)
    for folder in (deep, deep.parent, deep.parent.parent):
        (folder / "__init__.py").write_text("")
    (deep / "up_one.py").write_text("from ..parts import attention\n")
    (deep / "up_two.py").write_text("from ...parts import attention\n")
    (deep / "own.py").write_text("from .parts import attention\n")
    assert own_package_root(str(deep / "up_one.py")) == str(deep.parent)
    assert anchor_folder(str(deep / "up_one.py")) == str(deep.parent)
    assert own_package_root(str(deep / "up_two.py")) is None
    assert anchor_folder(str(deep / "up_two.py")) is None
    assert own_package_root(str(deep / "own.py")) is None
    os.remove(deep / "__init__.py")            # the file's own folder: a namespace package
    assert own_package_root(str(deep / "up_one.py")) == str(deep.parent)
    os.remove(deep.parent / "__init__.py")     # the folder above is no package: not seen
    assert own_package_root(str(deep / "up_one.py")) is None
    assert anchor_folder(str(deep / "up_one.py")) is None
