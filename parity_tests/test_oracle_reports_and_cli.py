"""Replay, reports and fixture bundles, and the command line (exit statuses, report files), on
candidates of parity_tests/oracle_candidates/ and ones the tests write into tmp_path."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check  # noqa: E402
from parity_tests.oracle.core.report import gradescope_results, json_report  # noqa: E402
from parity_tests.oracle.grading.fixtures import export, verify  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CANDIDATES = candidate_path()


def cand(file: str, name: str) -> str:
    return f"{os.path.join(CANDIDATES, file)}:{name}"


# ------------------------------------------------------------------------------------------------
# replay, reports
# ------------------------------------------------------------------------------------------------
def test_replay_reproduces_exactly_the_reported_case():
    spec = cand("torch_attention.py", "attention_mask_inverted")
    first = check("sdpa", spec, examples=30)
    again = check("sdpa", spec, replay=first.example)
    assert again.verdict == first.verdict and again.quantity == first.quantity
    assert again.detail["worst_index"] == first.detail["worst_index"]
    assert again.detail["got"] == first.detail["got"]
    assert again.detail["expected"] == first.detail["expected"]
    # the replay command carries the example as JSON
    payload = first.replay.split("--replay ", 1)[1].strip("'")
    assert json.loads(payload) == first.example


def test_gradescope_results_score_groups_and_redact_hidden_checks():
    spec = cand("numpy_candidates.py", "layernorm_bad_forward,layernorm_bad_backward")
    public = check("layernorm", spec, examples=10, score_groups=True)
    hidden = check("layernorm", spec, examples=10, seed=12345, score_groups=True)
    gs = gradescope_results(public, hidden, points=2.0)
    tests = {t["name"]: t for t in gs["tests"]}
    for t in gs["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output", "visibility"}
    assert tests["layernorm: output"]["score"] == 2.0          # forward right
    assert tests["layernorm: input gradients"]["score"] == 0.0  # dx wrong (the first difference)
    # dgamma and dbeta are right in this backward: a search comparing them alone matches
    assert tests["layernorm: parameter gradients"]["score"] == 2.0
    assert "2 quantities" in tests["layernorm: parameter gradients"]["output"]
    assert public.detail["after_first_difference"] == {"grad_param:weight": "match",
                                                       "grad_param:bias": "match"}
    h = tests["layernorm: input gradients (hidden)"]
    assert h["visibility"] == "after_due_date"
    assert "gradient of input 'x'" in h["output"]
    for t in gs["tests"]:
        if "(hidden)" in t["name"]:
            assert "replay" not in t["output"] and "expected" not in t["output"]
            assert not any(ch.isdigit() for ch in t["output"]), t["output"]
    rep = json_report(public, hidden)
    assert rep["verdict"] == "mismatch" and rep["hidden"]["verdict"] == "mismatch"
    json.dumps(rep)  # serialisable


# ------------------------------------------------------------------------------------------------
# fixture bundles
# ------------------------------------------------------------------------------------------------
def test_export_and_verify_round_trip(tmp_path):
    bundle = tmp_path / "bundle"
    manifest = export("sdpa", str(bundle), examples=4, seed=3, mask_convention="keep")
    assert manifest["component"] == "sdpa" and len(manifest["cases"]) == 4
    assert manifest["tolerances"]["by_quantity"]["output"]["atol"] > 0
    assert "numpy" in manifest["versions"] and "oracle" in manifest["versions"]
    on_disk = json.loads((bundle / "manifest.json").read_text())
    assert on_disk["cases"][0]["arrays"]["expected.output"]["dtype"] == "float64"

    # a "grader in another language": run an independent implementation on the bundle's inputs
    import importlib.util
    specm = importlib.util.spec_from_file_location("np_cands",
                                                   os.path.join(CANDIDATES, "numpy_candidates.py"))
    np_cands = importlib.util.module_from_spec(specm)
    specm.loader.exec_module(np_cands)
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    for c in manifest["cases"]:
        z = np.load(bundle / c["file"])
        mask = z["mask.mask"] if "mask.mask" in z.files else None
        out, w = np_cands.attention(z["input.q"], z["input.k"], z["input.v"], mask)
        np.savez(good / c["file"], output=out, attention_weights=w)
        np.savez(bad / c["file"], output=out * 1.001, attention_weights=w)
    ok = verify(str(bundle), str(good))
    assert ok["verdict"] == "match" and ok["exit_code"] == 0, ok["message"]
    assert "not provided" in ok["message"]            # no gradients were saved
    strict = verify(str(bundle), str(good), require_all=True)
    assert strict["exit_code"] == 1
    wrong = verify(str(bundle), str(bad))
    assert wrong["verdict"] == "mismatch" and wrong["exit_code"] == 1
    missing = verify(str(bundle), str(tmp_path / "nowhere"))
    assert missing["exit_code"] == 2



# ------------------------------------------------------------------------------------------------
# the command line: exit statuses and report files (subprocess)
# ------------------------------------------------------------------------------------------------
def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "parity_tests.oracle", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


WRONG_SCALE_NUMPY = textwrap.dedent('''
    import numpy as np

    def attention(Q, K, V, mask=None):
        """BUG: divides the scores by d_k instead of sqrt(d_k)."""
        s = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return w @ V, w
''')


def test_cli_mismatch_writes_reports_and_exits_1(tmp_path):
    report, results = tmp_path / "out.json", tmp_path / "results.json"
    (tmp_path / "student.py").write_text(WRONG_SCALE_NUMPY)   # NumPy: no torch import, fast
    p = run_cli("check", "sdpa", f"{tmp_path / 'student.py'}:attention", "--examples", "20",
                "--report", str(report), "--results", str(results),
                "--hidden-seed", "99", "--hidden-examples", "5")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "MISMATCH" in p.stdout and "replay exactly this case" in p.stdout
    rep = json.loads(report.read_text())
    assert rep["verdict"] == "mismatch" and rep["quantity"] == "output"
    assert rep["hidden"]["verdict"] == "mismatch"
    gs = json.loads(results.read_text())
    assert gs["score"] == 0 and any("(hidden)" in t["name"] for t in gs["tests"])
    # the printed replay command reproduces the same case
    lines = p.stdout.splitlines()
    line = lines[lines.index("  replay exactly this case:") + 1]
    import shlex
    argv = shlex.split(line.strip())[1:]
    q = run_cli(*argv, "--quiet")
    assert q.returncode == 1 and q.stdout.startswith("mismatch (exit 1): output"), q.stdout + q.stderr


def test_cli_exit_codes_match_cannot_load_and_raises(tmp_path):
    # NumPy candidates: these subprocesses never import torch (fast)
    p = run_cli("check", "sdpa", cand("numpy_candidates.py", "attention"), "--examples", "3",
                "--quiet")
    assert p.returncode == 0 and p.stdout.startswith("match"), p.stdout + p.stderr
    p = run_cli("check", "mha", str(tmp_path / "missing.py") + ":MHA", "--quiet")
    assert p.returncode == 2 and p.stdout.startswith("load_error"), p.stdout + p.stderr
    (tmp_path / "raising.py").write_text("def attention(q, k, v, mask=None):\n"
                                         "    raise ValueError('shapes do not line up')\n")
    p = run_cli("check", "sdpa", f"{tmp_path / 'raising.py'}:attention", "--quiet")
    assert p.returncode == 2 and p.stdout.startswith("raised"), p.stdout + p.stderr
    p = run_cli("check", "no_such_component", cand("numpy_candidates.py", "attention"))
    assert p.returncode == 2 and "expected one of" in p.stderr


def test_cli_export_and_verify(tmp_path):
    bundle = tmp_path / "b"
    p = run_cli("export", "layernorm", "--out", str(bundle), "--examples", "2")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "outputs.npz"
    arrays = {}
    for c in json.loads((bundle / "manifest.json").read_text())["cases"]:
        z = np.load(bundle / c["file"])
        case = c["file"][:-4]
        arrays[f"{case}/output"] = z["expected.output"]
        arrays[f"{case}/grad_input.x"] = z["expected.grad_input.x"] + 1.0
    np.savez(out, **arrays)
    p = run_cli("verify", str(bundle), str(out))
    assert p.returncode == 1 and "grad_input.x" in p.stdout, p.stdout + p.stderr
