"""`check --secret-file`: the single-file check draws its values as `grade` does with a course
secret (grading/secret.py): the same secret and the same file give the same values at every run
(the failing example's mixed seed, which the report shows, is the same); another secret, or a
changed file, gives others; the secret is written nowhere; a bad secret file is a usage error
naming the flag, before any search.
"""
from __future__ import annotations

import json

from parity_tests.oracle.cli import main

WRONG = ("import numpy as np\n\ndef attention(Q, K, V, mask=None):\n"
         "    s = Q @ np.swapaxes(K, -1, -2)\n"          # no 1/sqrt(d): wrong on every draw
         "    if mask is not None:\n        s = np.where(mask == 0, -1e9, s)\n"
         "    w = np.exp(s - s.max(-1, keepdims=True))\n    w = w / w.sum(-1, keepdims=True)\n"
         "    return w @ V, w\n")
SECRET_A = "course-secret-" + "9b1d" * 8
SECRET_B = "course-secret-" + "07e4" * 8


def _seed(tmp_path, name: str, secret: str, capsys) -> int:
    rep = tmp_path / f"{name}.json"
    code = main(["check", "sdpa", str(tmp_path / "attention.py:attention"), "--examples", "3",
                 "--runs", "1", "--quiet", "--report", str(rep),
                 "--secret-file", str(tmp_path / secret)])
    capsys.readouterr()
    data = json.loads(rep.read_text())
    assert code == 1 and data["verdict"] == "mismatch", data.get("message")
    assert SECRET_A not in rep.read_text() and SECRET_B not in rep.read_text()
    return data["example"]["seed"]


def test_check_secret_file_fixes_the_drawn_values_like_grade(tmp_path, capsys):
    (tmp_path / "attention.py").write_text(WRONG)
    (tmp_path / "a.secret").write_text(SECRET_A + "\n")
    (tmp_path / "b.secret").write_text(SECRET_B + "\n")
    a1, a2 = _seed(tmp_path, "a1", "a.secret", capsys), _seed(tmp_path, "a2", "a.secret", capsys)
    b1 = _seed(tmp_path, "b1", "b.secret", capsys)
    assert a1 == a2, (a1, a2)                 # a re-check draws the same values
    assert a1 != b1, (a1, b1)                 # another secret, other values
    (tmp_path / "attention.py").write_text(WRONG + "# resubmitted\n")
    assert _seed(tmp_path, "a3", "a.secret", capsys) != a1   # changed files, new values


def test_check_secret_file_too_short_is_a_usage_error_naming_the_flag(tmp_path, capsys):
    (tmp_path / "attention.py").write_text(WRONG)
    (tmp_path / "short.secret").write_text("abc\n")
    code = main(["check", "sdpa", str(tmp_path / "attention.py:attention"),
                 "--secret-file", str(tmp_path / "short.secret")])
    err = capsys.readouterr().err
    assert code == 2 and "--secret-file" in err and "3 bytes" in err, err
