"""The oracle cannot be cheated or taken down by the submission it checks.

Every hostile submission in parity_tests/oracle_hostile/ must end with a failing verdict, within
its timeout plus a few seconds, with nothing it started left running; through the CLI, the exit
status and both written files agree with the verdict, also after the submission tried to rewrite
them. Right code still matches. These candidates are NumPy functions (fast workers: no torch import),
except the lying torch.Tensor.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.core.verdicts import VERDICTS
from parity_tests.oracle.sandbox import parent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
SLACK = 15.0   # seconds beyond the submission's own time allowance (worker start-up on a busy CI box)


def spec(name: str) -> str:
    return f"{os.path.join(HOSTILE, name)}.py:attention"


def groups_gone(pids, wait: float = 3.0) -> list[int]:
    """Process groups (one per worker) that still have a member after `wait` seconds."""
    end = time.monotonic() + wait
    left = list(pids)
    while left and time.monotonic() < end:
        still = []
        for pid in left:
            try:
                os.killpg(pid, 0)
                still.append(pid)
            except ProcessLookupError:
                pass
            except PermissionError:
                still.append(pid)
        left = still
        if left:
            time.sleep(0.1)
    return left


# name, check() keywords, acceptable verdicts, allowance in seconds (submission's own time)
HOSTILE_CASES = [
    ("patch_modules", {}, {"interface_error"}, 10),   # numpy replaced: sandbox/tamper.py
    ("stack_reader", {}, {"mismatch"}, 10),
    ("verdict_exception", {"allow_import": ["parity_tests"]}, {"raised"}, 10),
    ("verdict_exception", {}, {"forbidden_import"}, 5),
    ("exit_at_import", {}, {"crashed"}, 5),
    ("exit_at_call", {}, {"crashed"}, 5),
    ("kill_self", {}, {"crashed"}, 5),
    ("fork_atexit", {}, {"mismatch"}, 10),
    ("delete_files", {}, {"mismatch"}, 10),
    ("thread_wrong", {}, {"mismatch"}, 10),
    ("blocking_str", {"timeout": 5.0}, {"raised", "timeout"}, 30),
    ("lying_array", {}, {"mismatch"}, 10),
    ("noisy", {"runs": 3, "examples": 30}, {"nondeterministic", "mismatch"}, 30),
    ("big_bug", {}, {"mismatch"}, 10),
    ("loops", {"timeout": 2.0}, {"timeout"}, 4),
    ("imports_reference", {}, {"forbidden_import"}, 1),
    ("imports_reference_dynamic", {}, {"forbidden_import"}, 5),
    ("memory_hog", {"examples": 2, "limits": parent.Limits(memory_mb=1024)},
     {"raised", "crashed"}, 20),
]


@pytest.mark.parametrize("name,kw,verdicts,allowance", HOSTILE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(HOSTILE_CASES)])
def test_hostile_submission_gets_a_failing_verdict(name, kw, verdicts, allowance):
    kw = dict(kw)
    examples = kw.pop("examples", 10)
    before = len(parent.STARTED)
    t0 = time.monotonic()
    res = check("sdpa", spec(name), examples=examples, **kw)
    took = time.monotonic() - t0
    assert res.verdict in verdicts, (res.verdict, res.message)
    assert res.exit_code == VERDICTS[res.verdict][0] != 0
    assert took < allowance + SLACK, took
    assert not parent.LIVE
    assert groups_gone(parent.STARTED[before:]) == []
    assert res.policy["isolated"] is True


def test_lying_tensor_subclass_is_read_as_plain_numbers():
    pytest.importorskip("torch")
    res = check("sdpa", spec("lying_tensor"), examples=5, shrink=False)
    assert res.verdict == "mismatch", res.message


def test_right_code_matches_despite_a_non_daemon_thread():
    before = len(parent.STARTED)
    t0 = time.monotonic()
    res = check("sdpa", spec("right"), examples=10)
    assert res.verdict == "match", res.message
    assert time.monotonic() - t0 < 10 + SLACK
    assert groups_gone(parent.STARTED[before:]) == []


def test_the_bug_above_size_5_is_out_of_reach_of_the_old_search_only():
    """Control for big_bug: it is right on everything the old search (sizes <= 5) could draw."""
    res = check("sdpa", spec("big_bug"), examples=10,
                settings={"max_len": 5, "max_d_head": 5})
    assert res.verdict == "match", res.message


def test_noise_is_invisible_with_one_run_and_a_fixed_rng_but_caught_with_fresh_states():
    """The worker reseeds the global RNGs unpredictably before every call; 3 runs x 30 examples
    leave a 10%-noise submission unseen with probability 0.9**90 < 1e-4."""
    res = check("sdpa", spec("noisy"), examples=30, runs=3, shrink=False)
    assert res.verdict in ("nondeterministic", "mismatch"), res.message


def test_policy_reports_imports_and_delegation(tmp_path):
    src = tmp_path / "sdpa_delegate.py"
    src.write_text("import torch\nimport torch.nn.functional as F\n\n"
                   "def attention(q, k, v, mask=None):\n"
                   "    return F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None"
                   " else mask.bool())\n")
    pytest.importorskip("torch")
    res = check("sdpa", f"{src}:attention", examples=3)
    assert res.verdict == "match", res.message
    assert "scaled_dot_product_attention" in res.policy["notable_calls"]
    assert "torch" in res.policy["imports_declared"]
    assert "torch" in res.policy["imports_seen"]


def test_forbid_import_option_and_allow_import(tmp_path):
    src = tmp_path / "uses_math.py"
    src.write_text("import math\nimport numpy as np\n\ndef attention(Q, K, V, mask=None):\n"
                   "    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])\n"
                   "    if mask is not None:\n        s = np.where(mask == 0, -1e9, s)\n"
                   "    w = np.exp(s - s.max(-1, keepdims=True))\n    w = w / w.sum(-1, keepdims=True)\n"
                   "    return w @ V, w\n")
    res = check("sdpa", f"{src}:attention", examples=2, forbid_import=["math"])
    assert res.verdict == "forbidden_import" and "math" in res.message
    res = check("sdpa", spec("imports_reference"), examples=3, allow_import=["npformer"])
    assert res.verdict == "match", res.message


def _cli(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "parity_tests.oracle", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name,code", [("fork_atexit", 1), ("exit_at_call", 2), ("kill_self", 2),
                                       ("right", 0)])
def test_cli_exit_status_and_files_agree_after_the_submission_is_gone(tmp_path, name, code):
    out = tmp_path / "out"
    # writing results is grading: everything required, here all but gradients (NumPy forward-only)
    p = _cli(["check", "sdpa", spec(name), "--examples", "5", "--report", "out/report.json",
              "--results", "out/results.json", "--quiet", "--require", "masks", "--require",
              "parameters"], cwd=tmp_path)
    assert p.returncode == code, p.stdout + p.stderr
    time.sleep(3.0)     # fork_atexit's grandchild would rewrite the files 2 s after each call
    report = json.loads((out / "report.json").read_text())
    results = json.loads((out / "results.json").read_text())
    assert report["exit_code"] == code
    assert report["verdict"] != "match" or code == 0
    total = sum(t["max_score"] for t in results["tests"])
    got = sum(t["score"] for t in results["tests"])
    assert (got == total) == (code == 0), results


def test_cli_checks_output_paths_before_the_search(tmp_path):
    (tmp_path / "blocker").write_text("a file, not a folder")
    p = _cli(["check", "sdpa", spec("right"), "--report", "blocker/report.json"], cwd=tmp_path)
    assert p.returncode == 2 and "--report" in p.stderr and "is a file" in p.stderr
    assert (tmp_path / "blocker").read_text() == "a file, not a folder"


def test_a_python_object_is_checked_in_process_and_says_so():
    import numpy as np

    def attention(Q, K, V, mask=None):
        s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return w @ V, w

    res = check("sdpa", attention, examples=4)
    assert res.verdict == "match", res.message
    assert res.policy["isolated"] is False
    assert any("not isolated" in n for n in res.notes)


# ------------------------------------------------------------------------------------------------
# the wire format: anything malformed is refused before a byte of data is used
# ------------------------------------------------------------------------------------------------
def _frame(header: dict, payload: bytes = b"") -> bytes:
    import struct
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + payload


@pytest.mark.parametrize("header,fragment", [
    ({"arrays": [{"name": "x", "dtype": "|O", "shape": [1]}]}, "dtype"),
    ({"arrays": [{"name": "x", "dtype": "<f8", "shape": [-1]}]}, "shape"),
    ({"arrays": [{"name": "x", "dtype": "<f8", "shape": [1 << 20, 1 << 20]}]}, "exceed"),
    ({"arrays": [{"name": "x", "dtype": "<f8", "shape": [1]},
                 {"name": "x", "dtype": "<f8", "shape": [1]}]}, "name"),
    ({"arrays": [{"name": "x", "dtype": "<f8", "shape": [1], "extra": 1}]}, "name/dtype/shape"),
    ({"arrays": "no"}, "list"),
])
def test_protocol_refuses_malformed_headers(header, fragment):
    from parity_tests.oracle.sandbox.protocol import ProtocolError, Reader

    r, w = os.pipe()
    os.write(w, _frame(header, b"\0" * 8))
    os.close(w)
    with pytest.raises(ProtocolError, match=fragment):
        Reader(r).read(time.monotonic() + 5)
    os.close(r)


def test_protocol_round_trip_gives_plain_arrays_and_deadlines_hold():
    import numpy as np

    from parity_tests.oracle.sandbox.protocol import Deadline, Reader, encode

    class Sub(np.ndarray):
        pass

    r, w = os.pipe()
    a = np.arange(6.0).reshape(2, 3).view(Sub)
    os.write(w, encode({"op": "x"}, {"a": a, "m": np.array([True, False]), "i": np.arange(3)}))
    h, arrays = Reader(r).read(time.monotonic() + 5)
    assert h["op"] == "x" and type(arrays["a"]) is np.ndarray
    assert arrays["a"].dtype == np.float64 and arrays["m"].dtype == np.bool_
    assert arrays["i"].dtype == np.int64 and arrays["a"].tolist() == a.tolist()
    t0 = time.monotonic()
    with pytest.raises(Deadline):
        Reader(r).read(time.monotonic() + 0.3)        # nothing more comes
    assert time.monotonic() - t0 < 2
    os.close(r)
    os.close(w)


def test_worker_side_component_modules_do_not_import_hypothesis():
    """The mask kinds are copied (the worker must not import hypothesis); they must stay equal."""
    from parity_tests.harness import strategies as hs
    from parity_tests.oracle.components import base as component_base

    assert component_base.MASK_KINDS == hs.MASK_KINDS
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "import parity_tests.oracle.sandbox.session; print('hypothesis' in sys.modules)")
    p = subprocess.run([sys.executable, "-I", "-c", code, ROOT], capture_output=True, text=True,
                       timeout=120)
    assert p.stdout.strip() == "False", p.stdout + p.stderr


def test_a_worker_cannot_declare_weights_absent_or_skip_runs():
    """The worker's claims are checked: only biases / norm parameters may be missing, and every
    run asked for must be answered."""
    import numpy as np

    from parity_tests.oracle.components import get
    from parity_tests.oracle.core.backend import validate_run
    from parity_tests.oracle.reading.findings import Findings

    comp = get("mha")
    case = comp.build({"B": 1, "Tq": 2, "Tk": 2, "d_model": 4, "num_heads": 2,
                       "mask": {"kind": "none", "keep": None}, "seed": 0}, "float64", Findings())
    ok = {"status": "ok", "absent": ["q_proj.bias"]}
    out = {"value:output": np.zeros(case.out_shape), "again1:output": np.zeros(case.out_shape)}
    assert validate_run(ok, out, case, comp, runs=2).absent == ["q_proj.bias"]
    bad = validate_run({"status": "ok", "absent": ["q_proj.weight"]}, out, case, comp, runs=2)
    assert bad.verdict == "interface_error" and "q_proj.weight" in bad.message
    mapped = validate_run({"status": "ok", "absent": ["q_proj.weight"]}, out, case, comp, runs=2,
                          name_map={"q_proj.weight": "-"})
    assert mapped.absent == ["q_proj.weight"]
    short = validate_run(ok, {"value:output": np.zeros(case.out_shape)}, case, comp, runs=2)
    assert short.verdict == "crashed"
    claimed = validate_run({"status": "failed", "verdict": "match", "message": "fine"}, {}, case,
                           comp, runs=2)
    assert claimed.verdict == "raised" and "only the oracle may give" in claimed.message
    odd = validate_run(ok, {**out, "value:secret": np.zeros(1)}, case, comp, runs=2)
    assert odd.verdict == "wrong_type"


def test_require_gradients_fails_a_forward_only_submission():
    res = check("sdpa", spec("right"), examples=3, require_gradients=True)
    assert res.verdict == "missing_gradient" and res.exit_code == 1, res.message
    assert check("sdpa", spec("right"), examples=3).verdict == "match"


def test_missing_hypothesis_gives_an_install_hint_not_a_traceback(tmp_path):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "hypothesis.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'hypothesis'\", name='hypothesis')\n")
    env = dict(os.environ, PYTHONPATH=f"{fake}{os.pathsep}{ROOT}")
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa",
                        spec("right")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2
    assert "pip install -e '.[oracle]'" in p.stderr and "Traceback" not in p.stderr
