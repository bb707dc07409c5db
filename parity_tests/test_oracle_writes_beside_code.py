"""Student code that writes beside itself (a `logs/` or `data/` folder made at import, a file
written at each call) runs on a throwaway, writable copy of its folder in the worker's private
view (sandbox/writable_copy.py): it is checked, and the instructor's folder is never written. A
module the submission writes or changes there is refused (sources.install's `frozen`), so what
runs is still the text the oracle scanned. Where the machine builds no private view, the folder
stays read-only and these tests are skipped, naming why.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.sandbox import writable_copy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CANDIDATES = os.path.join(ROOT, "parity_tests", "oracle_candidates")
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
RIGHT_SDPA = '''import numpy as np


def attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w
'''


def tree(folder) -> dict:
    """{relative path: bytes or 'dir'} of everything below folder."""
    out = {}
    for top, dirs, files in os.walk(folder):
        for d in dirs:
            out[os.path.relpath(os.path.join(top, d), folder)] = "dir"
        for f in files:
            with open(os.path.join(top, f), "rb") as fh:
                out[os.path.relpath(os.path.join(top, f), folder)] = fh.read()
    return out


def student(tmp_path, source: str, name: str = "attention.py"):
    folder = tmp_path / "submissions" / "alice"
    folder.mkdir(parents=True)
    shutil.copy(source, folder / name)
    return folder


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    folder = student(tmp_path_factory.mktemp("probe"), os.path.join(CANDIDATES,
                                                                     "writes_beside_itself.py"))
    res = check("sdpa", f"{folder / 'attention.py'}:attention", examples=2)
    conf = res.policy["confinement"]
    if not conf.get("view"):
        pytest.skip(f"no private view on this machine: {conf.get('view_reason')}")
    return res


def test_code_writing_beside_itself_matches_and_its_folder_is_not_written(view, tmp_path):
    folder = student(tmp_path, os.path.join(CANDIDATES, "writes_beside_itself.py"))
    before = tree(folder)
    res = check("sdpa", f"{folder / 'attention.py'}:attention", examples=4)
    assert res.verdict == "match", res.message
    assert res.policy["confinement"]["writable_copy"] is True
    assert tree(folder) == before                       # no logs/, no last_shape.txt


def test_a_module_written_by_the_submission_is_refused_and_the_original_kept(view, tmp_path):
    folder = student(tmp_path, os.path.join(HOSTILE, "rewrites_own_module.py"))
    (folder / "scale_helper.py").write_text("def scale(d):\n    return d ** -0.5\n")
    before = tree(folder)
    res = check("sdpa", f"{folder / 'attention.py'}:attention", examples=3)
    assert res.verdict == "load_error", (res.verdict, res.message)
    assert "written or changed by the submission" in res.message
    assert tree(folder) == before


def test_a_project_on_pythonpath_whose_config_makes_folders_is_checked(view, tmp_path):
    """A repository root on the oracle's PYTHONPATH whose `config.py` makes data/ and logs/ beside
    it when imported, the attention in a package below: the root is copied, so the import works."""
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    (repo / "config.py").write_text(
        "from pathlib import Path\nROOT = Path(__file__).resolve().parent\n"
        "for d in ('data', 'logs'):\n    (ROOT / d).mkdir(parents=True, exist_ok=True)\n")
    (repo / "models" / "__init__.py").write_text("")
    (repo / "models" / "attn.py").write_text("import config  # noqa: F401\n" + RIGHT_SDPA)
    before = tree(repo)
    here = tmp_path / "grader"
    here.mkdir()
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa",
                        f"{repo / 'models' / 'attn.py'}:attention", "--examples", "3", "--quiet"],
                       cwd=here, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, str(repo)])})
    assert p.returncode == 0 and p.stdout.startswith("match"), p.stdout + p.stderr
    assert tree(repo) == before


def test_the_copy_keeps_files_links_and_folders_and_leaves_out_fifos(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "view" / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text("x = 1\n")
    (src / "data.bin").write_bytes(os.urandom(1000))
    os.symlink("/etc/passwd", src / "outside")
    os.mkfifo(src / "pipe")
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("ref\n")
    assert writable_copy.copy_tree(str(src), str(dst))
    assert (dst / "pkg" / "a.py").read_text() == "x = 1\n"
    assert (dst / "data.bin").read_bytes() == (src / "data.bin").read_bytes()
    assert os.readlink(dst / "outside") == "/etc/passwd"        # a link, never followed
    assert not os.path.lexists(dst / "pipe") and not os.path.lexists(dst / ".git")
    (dst / "pkg" / "new.txt").write_text("written")             # the copy is writable
    assert not (src / "pkg" / "new.txt").exists()


def test_a_folder_over_the_limits_or_a_used_destination_is_not_copied(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.bin").write_bytes(b"\0" * 5000)
    monkeypatch.setattr(writable_copy, "COPY_BYTES", 4000)
    assert not writable_copy.copy_tree(str(src), str(tmp_path / "a"))
    assert not os.path.lexists(tmp_path / "a")
    monkeypatch.setattr(writable_copy, "COPY_BYTES", 10_000)
    used = tmp_path / "b"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    assert not writable_copy.copy_tree(str(src), str(used))
    assert (used / "keep.txt").read_text() == "mine" and not (used / "big.bin").exists()
    empty = tmp_path / "c"
    empty.mkdir()
    assert writable_copy.copy_tree(str(src), str(empty))       # an empty folder of ours is reused
    assert (empty / "big.bin").stat().st_size == 5000


def test_only_the_submissions_own_folders_are_asked_for_and_never_one_holding_the_scratch(
        tmp_path, monkeypatch):
    """A submission kept in the folder that holds the worker's scratch (a file in /tmp itself)
    is never copied: the copy would hold the view being built. Its own folder elsewhere is."""
    from parity_tests.oracle.sandbox import child
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.chdir(scratch)
    (tmp_path / "attention.py").write_text(RIGHT_SDPA)
    header = {"spec": f"{tmp_path / 'attention.py'}:attention", "import_path": [], "options": {}}
    assert child._writable(header, ROOT) == ()
    sub = tmp_path / "alice"
    sub.mkdir()
    (sub / "attention.py").write_text(RIGHT_SDPA)
    header["spec"] = f"{sub / 'attention.py'}:attention"
    assert child._writable(header, ROOT) == (os.path.realpath(sub),)
    header["spec"] = f"{os.path.join(ROOT, 'parity_tests', 'oracle_hostile', 'right.py')}:attention"
    assert child._writable(header, ROOT) == ()                 # inside the project: read-only
