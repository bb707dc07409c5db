"""The submission's writable copy (sandbox/writable_copy.py) is checked under every spelling of a
path: a module written or changed there is refused whether it is imported through the folder's
plain path, a leading `//` (the same folder), or as compiled Python without a source in a copied
import root above the submission's own folder (sandbox/sources.py `places`, `changed`); and links
in the folder never carry a write to the instructor's files. Skipped where no private view is built.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.sandbox.sources import places

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
RIGHT_SCALE = "def scale(d):\n    return d ** -0.5\n"


def tree(folder) -> dict:
    """{relative path: bytes, 'dir' or ('link', target)} of everything below folder."""
    out = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, folder)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                out[rel] = "dir"
            else:
                with open(path, "rb") as fh:
                    out[rel] = fh.read()
    return out


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    folder = tmp_path_factory.mktemp("probe")
    shutil.copy(os.path.join(HOSTILE, "writes_through_links.py"), folder / "attention.py")
    res = check("sdpa", f"{folder / 'attention.py'}:attention", examples=2)
    if not res.policy["confinement"].get("view"):
        pytest.skip(f"no private view: {res.policy['confinement'].get('view_reason')}")
    return res


def test_every_spelling_of_a_path_is_compared():
    assert "/tmp/x.py" in places("//tmp/x.py")
    here = os.path.realpath(os.getcwd())
    assert os.path.join(here, "m.py") in places(f"/proc/self/root{here}/m.py")


def test_a_module_rewritten_and_imported_through_a_double_slash_is_refused(view, tmp_path):
    folder = tmp_path / "class" / "alice"
    folder.mkdir(parents=True)
    shutil.copy(os.path.join(HOSTILE, "rewrites_module_by_alias.py"), folder / "attention.py")
    (folder / "scale_helper.py").write_text(RIGHT_SCALE)
    before = tree(tmp_path / "class")
    res = check("sdpa", f"{folder / 'attention.py'}:attention", examples=3)
    assert res.verdict == "load_error", (res.verdict, res.message)     # was mismatch: it ran
    assert "written or changed by the submission" in res.message
    assert tree(tmp_path / "class") == before


def test_bytecode_written_into_a_copied_import_root_is_refused(view, tmp_path):
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    (repo / "models" / "__init__.py").write_text("")
    shutil.copy(os.path.join(HOSTILE, "writes_bytecode_beside_root.py"), repo / "models" / "attn.py")
    before = tree(repo)
    here = tmp_path / "grader"
    here.mkdir()
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa",
                        f"{repo / 'models' / 'attn.py'}:attention", "--examples", "3"],
                       cwd=here, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, str(repo)])})
    assert "LOAD_ERROR" in p.stdout and "scale_helper.pyc was written or changed" in p.stdout, \
        p.stdout + p.stderr                                         # was MISMATCH: it ran
    assert tree(repo) == before


def test_links_in_the_folder_never_carry_a_write_out_of_the_copy(view, tmp_path):
    classes = tmp_path / "class"
    folder = classes / "alice"
    folder.mkdir(parents=True)
    shutil.copy(os.path.join(HOSTILE, "writes_through_links.py"), folder / "attention.py")
    secret = tmp_path / "instructor"
    secret.mkdir()
    (secret / "grades.csv").write_text("alice,0\n")
    os.symlink(secret / "grades.csv", folder / "grades_link")
    os.symlink(secret, folder / "instructor_link")
    os.symlink(os.path.join(ROOT, "parity_tests", "harness"), folder / "harness_link")
    os.symlink("..", folder / "up")
    before, secret_before = tree(classes), tree(secret)
    harness_before = sorted(os.listdir(os.path.join(ROOT, "parity_tests", "harness")))
    res = check("sdpa", f"{folder / 'attention.py'}:attention", examples=3)
    assert res.verdict == "match", res.message
    assert res.policy["confinement"]["writable_copy"] is True
    assert tree(classes) == before and tree(secret) == secret_before
    assert sorted(os.listdir(os.path.join(ROOT, "parity_tests", "harness"))) == harness_before


def test_a_package_written_into_the_copy_is_refused(view, tmp_path):
    folder = tmp_path / "class" / "alice"
    folder.mkdir(parents=True)
    shutil.copy(os.path.join(HOSTILE, "writes_new_package.py"), folder / "attention.py")
    before = tree(tmp_path / "class")
    res = check("sdpa", f"{folder / 'attention.py'}:attention", examples=3)
    assert res.verdict == "load_error", (res.verdict, res.message)
    assert "__init__.py was written or changed by the submission" in res.message
    assert tree(tmp_path / "class") == before
