"""Hostile submissions against the confinement: the reference read from memory or disk, the parent's memory,
the network, signals to the oracle, a setsid daemon that outlives the kill and rewrites grades, a
fork bomb, a full disk, forged protocol frames. Each must end with a failing verdict and leave
nothing behind. The kernel facilities these rely on (namespaces, Landlock, a pids cgroup) are not
everywhere: where the report's `policy.confinement` says one is missing, its test is skipped with
that reason (docs/ORACLE.md, threat model, says what then remains open).
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.grading.batch import grade
from parity_tests.oracle.sandbox import parent
from parity_tests.test_oracle_sandbox import groups_gone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
MARKER = "oracle-hostile-daemon"


def spec(name: str) -> str:
    return f"{os.path.join(HOSTILE, name)}.py:attention"


def needs(conf: dict, what: str) -> None:
    """Skip when the machine does not offer the confinement this attack is stopped by."""
    ok = {"landlock": bool(conf.get("landlock")),
          "network": conf.get("network_tcp_denied") or conf.get("namespaces"),
          "signals": conf.get("signals_scoped") or conf.get("namespaces"),
          "pids": bool(conf.get("pids_max") or conf.get("rlimit_nproc")),
          "tmpfs": bool(conf.get("scratch_mb")),
          "escape": conf.get("namespaces") or conf.get("pids_max"),
          "memory": bool(conf.get("memory_mb_total"))}[what]
    if not ok:
        pytest.skip(f"this machine offers no {what} confinement: {conf}")


@pytest.fixture(scope="module")
def confinement():
    res = check("sdpa", spec("right"), examples=1)
    assert res.verdict == "match", res.message
    return res.policy["confinement"]


def survivors() -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if MARKER.encode() in f.read():
                        out.append(pid)
            except OSError:
                pass
    return out


# name, acceptable verdicts, the confinement that stops it (None: always stopped)
CASES = [
    ("ref_in_memory", {"raised", "forbidden_import"}, None),
    # the audit hook refuses the read (forbidden_import), or the private view holds no reference
    # source at all (the candidate's open() raises: raised)
    ("ref_from_source", {"forbidden_import", "raised"}, None),
    ("parent_memory", {"mismatch"}, "landlock"),
    ("network", {"mismatch"}, "network"),
    ("fork_bomb", {"mismatch"}, "pids"),
    ("disk_fill", {"mismatch"}, "tmpfs"),
    ("forge_frames", {"crashed"}, None),
    ("close_channel", {"crashed"}, None),
    ("forge_nested", {"crashed"}, None),
    ("memory_fan", {"mismatch"}, "memory"),
]


@pytest.mark.parametrize("name,verdicts,facility", CASES, ids=[c[0] for c in CASES])
def test_new_hostile_submission_gets_a_failing_verdict(confinement, name, verdicts, facility):
    if facility:
        needs(confinement, facility)
    before = len(parent.STARTED)
    kw = {"limits": parent.Limits(memory_mb=1024)} if name == "memory_fan" else {}
    res = check("sdpa", spec(name), examples=2, **kw)
    assert res.verdict in verdicts, (res.verdict, res.message)
    assert not parent.LIVE
    if name == "forge_frames":      # refused from its header, before 200 MiB were read
        assert "exceed" in res.message, res.message
    if name == "forge_nested":
        assert "RecursionError" in res.message, res.message
    if name == "ref_from_source":   # refused by the audit hook, or absent from the private view
        assert any("npformer" in v for v in res.policy["violations"]) or (
            res.policy["confinement"].get("view") and "No such file" in res.message), res.policy
    assert groups_gone(parent.STARTED[before:]) == []


def test_the_report_says_what_confinement_was_applied(confinement):
    for key in ("namespaces", "landlock", "pids_max", "reference_in_memory"):
        assert key in confinement, confinement
    assert confinement["reference_in_memory"] == 0


def _cli(args, cwd, timeout=120):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "parity_tests.oracle", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_a_submission_cannot_stop_the_oracle_with_a_signal(confinement, tmp_path):
    needs(confinement, "signals")
    p = _cli(["check", "sdpa", spec("signal_parent"), "--examples", "2", "--quiet"], tmp_path, 90)
    assert p.returncode == 1, p.stdout + p.stderr       # mismatch, not a stopped oracle


def test_a_setsid_daemon_dies_with_its_worker_and_rewrites_nothing(confinement, tmp_path):
    needs(confinement, "escape")
    p = _cli(["check", "sdpa", spec("daemon_escape"), "--examples", "2", "--quiet",
              "--results", "out/results.json", "--report", "out/report.json"], tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    time.sleep(2.0)                 # a surviving daemon rewrites every 0.25 s
    assert survivors() == []
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["score"] == 0.0, results
    assert json.loads((tmp_path / "out" / "report.json").read_text())["verdict"] == "mismatch"


SPEC = """
[assignment]
name = "attention"
entry_file = "attention.py"
examples = 3
seed = 3
timeout = 5
runs = 2
require = ["masks", "cross_attention", "parameters", "eps"]   # NumPy forward-only: no gradients

[[check]]
name = "sdpa"
component = "sdpa"
entry = "attention"
points = 10
"""


def test_in_a_batch_a_daemon_changes_no_grade_and_no_gradebook(confinement, tmp_path):
    needs(confinement, "escape")
    for student, src in (("ann_right", "right.py"), ("zed_daemon", "daemon_escape.py"),
                         ("mo_memory", "ref_in_memory.py")):
        (tmp_path / "subs" / student).mkdir(parents=True)
        shutil.copy(os.path.join(HOSTILE, src), tmp_path / "subs" / student / "attention.py")
    (tmp_path / "assignment.toml").write_text(SPEC)
    out = tmp_path / "out"
    grade(str(tmp_path / "subs"), str(tmp_path / "assignment.toml"), str(out), jobs=2, quiet=True)
    time.sleep(2.0)
    assert survivors() == []
    rows = {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert set(rows) == {"ann_right", "zed_daemon", "mo_memory"}, rows
    assert float(rows["ann_right"]["score"]) == 10.0
    assert float(rows["zed_daemon"]["score"]) == 0.0
    assert float(rows["mo_memory"]["score"]) == 0.0
    for student, score in (("ann_right", 10.0), ("zed_daemon", 0.0)):
        assert json.loads((out / student / "results.json").read_text())["score"] == score


def test_in_a_batch_a_worker_cannot_read_a_classmates_submission(confinement, tmp_path):
    needs(confinement, "landlock")
    victim = open(os.path.join(HOSTILE, "right.py")).read().replace(
        "def attention(Q, K, V, mask=None):\n",
        "def attention(Q, K, V, mask=None):  # STEAL-ME\n    time.sleep(0.3)\n")
    assert "STEAL-ME" in victim
    (tmp_path / "subs" / "ann_right").mkdir(parents=True)
    (tmp_path / "subs" / "ann_right" / "attention.py").write_text(victim)
    (tmp_path / "subs" / "tom_thief").mkdir(parents=True)
    shutil.copy(os.path.join(HOSTILE, "steal.py"), tmp_path / "subs" / "tom_thief" / "attention.py")
    (tmp_path / "assignment.toml").write_text(SPEC)
    out = tmp_path / "out"
    grade(str(tmp_path / "subs"), str(tmp_path / "assignment.toml"), str(out), jobs=2, quiet=True)
    rows = {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert float(rows["ann_right"]["score"]) == 10.0, rows
    assert float(rows["tom_thief"]["score"]) == 0.0, rows


def test_without_namespaces_the_pids_cgroup_still_kills_a_setsid_daemon(confinement, tmp_path,
                                                                         monkeypatch):
    if not confinement.get("pids_max"):
        pytest.skip(f"no pids cgroup can be made here: {confinement}")
    from parity_tests.oracle.sandbox import confine
    monkeypatch.setattr(confine, "_NS_CACHE", [([], "disabled by this test")])
    res = check("sdpa", spec("daemon_escape"), examples=2)
    assert res.verdict == "mismatch", res.message
    assert res.policy["confinement"]["namespaces"] is False
    time.sleep(1.0)
    assert survivors() == []


def test_no_control_character_from_the_worker_reaches_the_terminal_or_the_files(tmp_path):
    p = _cli(["check", "sdpa", spec("terminal_escape"), "--examples", "2",
              "--report", "report.json", "--results", "results.json"], tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr                 # raised
    for where in (p.stdout, p.stderr, (tmp_path / "report.json").read_text(),
                  (tmp_path / "results.json").read_text()):
        assert "\x1b" not in where and "\\u001b" not in where, where[:500]
    assert json.loads((tmp_path / "report.json").read_text())["verdict"] == "raised"
