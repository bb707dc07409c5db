"""The worker sees only what it needs: hostile submissions that look for correct code or secrets
beside the hidden reference folders (the project's .git and example candidates, an instructor's
solution.py in the oracle's working directory, a harness file name given to compile(), the host's
/proc with the oracle's command line, a host unix socket) each end with a failing verdict and
reach nothing. Where the machine cannot build the private view (no user/mount namespaces), the
tests that need it are skipped, naming what is missing (docs/ORACLE.md, threat model).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading

import pytest

from parity_tests.oracle import check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
FAILING = {"mismatch", "raised", "wrong_shape", "non_finite"}


def spec(name: str) -> str:
    return f"{os.path.join(HOSTILE, name)}.py:attention"


@pytest.fixture(scope="module")
def view():
    res = check("sdpa", spec("right"), examples=1)
    assert res.verdict == "match", res.message
    conf = res.policy["confinement"]
    if not conf.get("view"):
        pytest.skip(f"no private view on this machine: {conf.get('view_reason')}")
    return conf


def test_the_report_says_the_view_and_its_private_proc(view):
    assert view["view"] is True and view["private_proc"] is True


def test_the_project_around_the_submission_is_invisible(view):
    res = check("sdpa", spec("reads_project"), examples=5)
    assert res.verdict in FAILING, (res.verdict, res.message)


@pytest.mark.parametrize("pythonpath", ["root", "root+cwd"])
def test_a_solution_in_the_oracles_working_directory_is_not_importable(tmp_path, pythonpath):
    """Also when the instructor's PYTHONPATH names the project and the course folder: the worker
    imports from PYTHONPATH folders, never from those two."""
    here, sub = tmp_path / "course", tmp_path / "submissions" / "alice"
    here.mkdir()
    sub.mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "parity_tests", "oracle_candidates", "numpy_candidates.py"),
                here / "solution.py")
    shutil.copy(os.path.join(HOSTILE, "imports_cwd_solution.py"), sub / "attention.py")
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa",
                        f"{sub / 'attention.py'}:attention", "--examples", "5", "--quiet"],
                       cwd=here, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": ROOT if pythonpath == "root" else
                            os.pathsep.join([ROOT, str(here)])})
    assert p.returncode == 1 and p.stdout.startswith("mismatch"), p.stdout + p.stderr


def test_an_import_under_a_harness_file_name_is_still_the_submissions():
    res = check("sdpa", spec("spoofed_filename_import"), examples=3,
                forbid_import=["npformer", "torchformer", "parity_tests", "xxsubtype"])
    assert res.verdict == "forbidden_import", (res.verdict, res.message)
    assert any("xxsubtype" in v for v in res.policy["violations"])


def test_the_worker_sees_no_host_process_and_no_secret_reaches_the_results(view, tmp_path):
    out = tmp_path / "results.json"
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa",
                        spec("reads_proc"), "--examples", "2", "--hidden-seed", "987654321",
                        "--results", str(out), "--quiet"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300, env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 2, p.stdout + p.stderr
    text = out.read_text()
    assert "987654321" not in text and "pytest" not in text
    res = check("sdpa", spec("reads_proc"), examples=1)
    assert res.verdict == "raised"
    seen = int(res.message.split("saw ", 1)[1].split(" ", 1)[0])
    assert seen <= 3 and res.message.rstrip().endswith("secrets:"), res.message


def test_a_host_unix_socket_is_out_of_reach(view):
    path = "/tmp/npformer-oracle-host.sock"          # the path the submission knows
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(8)
    srv.settimeout(0.2)
    accepted, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            accepted.append(1)
            c.sendall(b"RIGHT")
            c.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        res = check("sdpa", spec("connects_unix_socket"), examples=5)
    finally:
        stop.set()
        t.join(2)
        srv.close()
        os.unlink(path)
    assert res.verdict in FAILING, (res.verdict, res.message)
    assert accepted == []



FALLBACK = [("reads_project", FAILING), ("reads_proc", {"raised"}), ("right", {"match"})]


@pytest.mark.parametrize("name,verdicts", FALLBACK, ids=[c[0] for c in FALLBACK])
def test_without_namespaces_landlock_allows_reading_only_the_listed_paths(name, verdicts,
                                                                          monkeypatch):
    from parity_tests.oracle.sandbox import confine
    monkeypatch.setenv("NPFORMER_ORACLE_NO_NAMESPACES", "1")
    monkeypatch.setattr(confine, "_NS_CACHE", [])
    res = check("sdpa", spec(name), examples=3)
    conf = res.policy["confinement"]
    if not conf.get("landlock"):
        pytest.skip(f"no Landlock on this machine: {conf.get('reason')}")
    assert conf["view"] is False and conf["read_allow_list"] is True
    assert res.verdict in verdicts, (res.verdict, res.message)
    if name == "reads_proc":
        assert "Permission denied: '/proc'" in res.message


def test_the_project_stays_hidden_even_under_a_kept_folder(view, tmp_path):
    """A project checked out under a folder the view keeps (here its parent) still shows only
    the harness files."""
    code = ("import os, sys; from parity_tests.oracle.sandbox.view import private_view, SYSTEM, "
            "python_paths; root = sys.argv[1]; keep = list(SYSTEM) + python_paths(exclude=(root,)) "
            "+ [os.path.dirname(root), os.path.join(root, 'parity_tests', 'oracle')]; "
            "assert private_view(keep, os.getcwd(), 64, hide=(root,))['view']; "
            "print(sorted(os.listdir(root)), sorted(os.listdir(os.path.join(root, 'parity_tests'))))")
    p = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork",
                        "--mount-proc", sys.executable, "-c", code, ROOT], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 0, p.stderr
    top = ["parity_tests"]
    prefix = os.path.realpath(sys.prefix)           # a virtual environment inside the checkout (CI's
    if prefix.startswith(os.path.realpath(ROOT) + os.sep):   # .venv) is the interpreter: it stays
        top.append(os.path.relpath(prefix, os.path.realpath(ROOT)).split(os.sep)[0])
    assert p.stdout.strip() == f"{sorted(top)} ['oracle']"
