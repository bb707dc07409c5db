"""A course's grading secret (`grade --secret-file`, `gradescope-bundle --secret-file`).

Each check mixes a secret salt into the values it draws; without a course secret the salt is new at
every run, so a regrade may draw other values. With the same secret file, two runs of `grade` on
the same files draw the same values (the failing example's mixed seed, which the report shows, is
the same); with another secret they draw others; the bundle's run_autograder, given the same files,
reports the same failure as `grade`; the secret appears in no file either writes.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from parity_tests.oracle.grading.batch import grade
from parity_tests.oracle.grading.gradescope import build_bundle
from parity_tests.oracle.grading.secret import read_secret

SPEC = """
[assignment]
name = "attention"
entry_file = "attention.py"
examples = 3
seed = 3
timeout = 5
runs = 1
require = ["masks", "cross_attention", "parameters", "eps"]

[[check]]
name = "sdpa"
component = "sdpa"
entry = "attention"
points = 10
"""

WRONG = ("import numpy as np\n\ndef attention(Q, K, V, mask=None):\n"
         "    s = Q @ np.swapaxes(K, -1, -2)\n"          # no 1/sqrt(d): wrong on every draw
         "    if mask is not None:\n        s = np.where(mask == 0, -1e9, s)\n"
         "    w = np.exp(s - s.max(-1, keepdims=True))\n    w = w / w.sum(-1, keepdims=True)\n"
         "    return w @ V, w\n")

SECRET_A = "course-secret-" + "5f0e" * 8
SECRET_B = "course-secret-" + "c3a1" * 8


def _setup(tmp_path):
    (tmp_path / "subs" / "cy").mkdir(parents=True)
    (tmp_path / "subs" / "cy" / "attention.py").write_text(WRONG)
    (tmp_path / "spec.toml").write_text(SPEC)
    (tmp_path / "a.secret").write_text(SECRET_A + "\n")
    (tmp_path / "b.secret").write_text(SECRET_B + "\n")


def _drawn_seed(out) -> int:
    rep = json.loads((out / "cy" / "report.json").read_text())["checks"][0]["report"]
    assert rep["verdict"] == "mismatch", rep["message"]
    return rep["example"]["seed"]


def test_same_secret_same_values_other_secret_other_values_never_written(tmp_path):
    _setup(tmp_path)
    seeds = {}
    for run, key in (("a1", "a"), ("a2", "a"), ("b1", "b")):
        grade(str(tmp_path / "subs"), str(tmp_path / "spec.toml"), str(tmp_path / run),
              quiet=True, secret_file=str(tmp_path / f"{key}.secret"))
        seeds[run] = _drawn_seed(tmp_path / run)
    assert seeds["a1"] == seeds["a2"], seeds          # a regrade draws the same values
    assert seeds["a1"] != seeds["b1"], seeds          # another course's secret, other values
    # Gradescope: the bundle built with the same secret, run on the same files
    build_bundle(str(tmp_path / "spec.toml"), str(tmp_path / "ag.zip"),
                 secret_file=str(tmp_path / "a.secret"))
    ag = tmp_path / "ag"
    for d in ("source", "submission", "results"):
        (ag / d).mkdir(parents=True)
    with zipfile.ZipFile(tmp_path / "ag.zip") as z:
        z.extractall(ag / "source")
    (ag / "submission" / "attention.py").write_text(WRONG)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(AUTOGRADER_ROOT=str(ag), PYTHON=sys.executable)
    p = subprocess.run(["bash", str(ag / "source" / "run_autograder")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert SECRET_A not in p.stdout + p.stderr
    got = json.loads((ag / "results" / "results.json").read_text())["tests"][0]
    want = json.loads((tmp_path / "a1" / "cy" / "results.json").read_text())["tests"][0]
    assert got["status"] == "failed" and got["output"] == want["output"], (got, want)
    for run in ("a1", "a2", "b1", "ag/results"):
        for dp, _, fns in os.walk(tmp_path / run):
            for fn in fns:
                data = open(os.path.join(dp, fn), "rb").read()
                for secret in (SECRET_A, SECRET_B):
                    assert secret.encode() not in data, os.path.join(dp, fn)


def test_bundle_packs_the_secret_private_and_passes_it_on(tmp_path):
    _setup(tmp_path)
    info = build_bundle(str(tmp_path / "spec.toml"), str(tmp_path / "ag.zip"),
                        secret_file=str(tmp_path / "a.secret"))
    assert info["secret"] is True and SECRET_A not in json.dumps(info)
    with zipfile.ZipFile(tmp_path / "ag.zip") as z:
        assert z.read("secret").strip() == SECRET_A.encode()
        assert stat.S_IMODE(z.getinfo("secret").external_attr >> 16) == 0o600
        run = z.read("run_autograder").decode()
    assert '--secret-file "$ROOT/source/secret"' in run


@pytest.mark.parametrize("content, expected", [
    ("short\n", "16 to 4096 bytes"), ("x" * 5000, "at most 4096 bytes")])
def test_a_bad_secret_file_is_refused_naming_the_flag(tmp_path, content, expected):
    p = tmp_path / "s.secret"
    p.write_text(content)
    with pytest.raises(ValueError, match=f"--secret-file.*{expected}"):
        read_secret(str(p))
    with pytest.raises(ValueError, match="--secret-file.*an existing file"):
        read_secret(str(tmp_path / "missing"))
    os.symlink(p, tmp_path / "link")
    with pytest.raises(ValueError, match="--secret-file.*a link"):
        read_secret(str(tmp_path / "link"))
