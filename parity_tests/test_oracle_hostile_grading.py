"""What a class's grading does around the checks: a submission's own files and text cannot stall
the grader, crash it, or write a line that passes for the oracle's. `gradescope-run` reads a
submission as `grade` does (a link to the instructor's solution is refused, never followed); a
submission of thousands of files is refused before it is copied; the copy's fingerprint opens no
pipe, follows no link and takes any file name; a message's line breaks stay indented under the
verdict in results.json (`forged_results_line`).
"""
from __future__ import annotations

import json
import os
import shutil
import threading

import pytest

from parity_tests.oracle.grading.batch import fingerprint
from parity_tests.oracle.grading.gradescope import run_one
from parity_tests.oracle.grading.submissions import MAX_ENTRIES, SubmissionError, read_submission

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")

SPEC = """
[assignment]
name = "attention"
entry_file = "attention.py"
examples = 3
seed = 3
timeout = 5
require = ["masks", "cross_attention", "parameters", "eps"]

[[check]]
name = "sdpa"
component = "sdpa"
entry = "attention"
points = 10
"""


def _spec(tmp_path) -> str:
    p = tmp_path / "assignment.toml"
    p.write_text(SPEC)
    return str(p)


def test_a_message_cannot_start_a_line_of_the_gradescope_output(tmp_path):
    sub = tmp_path / "submission"
    sub.mkdir()
    shutil.copy(os.path.join(HOSTILE, "forged_results_line.py"), sub / "attention.py")
    res = run_one(_spec(tmp_path), str(sub), str(tmp_path / "results.json"))
    assert res["score"] == 0
    assert res["output_format"] == "text"     # its Markdown table is shown as written
    out = json.loads((tmp_path / "results.json").read_text())["tests"][0]["output"]
    first, *rest = out.split("\n")
    assert first.startswith("raised: ")
    assert rest and all(line.startswith("    ") or not line.strip() for line in rest), out
    assert "    match: every quantity matched" in out


def test_gradescope_run_refuses_a_link_to_the_solution(tmp_path):
    """Without Landlock or a private view (a container may have neither) the worker loaded the
    link's target, the instructor's solution; now nothing runs and the reason is named."""
    solution = tmp_path / "instructor" / "attention.py"
    solution.parent.mkdir()
    shutil.copy(os.path.join(HOSTILE, "right.py"), solution)
    sub = tmp_path / "submission"
    sub.mkdir()
    os.symlink(solution, sub / "attention.py")
    res = run_one(_spec(tmp_path), str(sub), str(tmp_path / "results.json"))
    assert res["score"] == 0
    assert all(t["status"] == "failed" for t in res["tests"])
    assert "is a link" in res["tests"][0]["output"]


def test_a_submission_of_thousands_of_files_is_refused_before_reading(tmp_path):
    for i in range(MAX_ENTRIES + 1):
        (tmp_path / f"f{i}.py").touch()
    with pytest.raises(SubmissionError, match=f"more than {MAX_ENTRIES} files"):
        read_submission(str(tmp_path), "attention.py")


def test_the_fingerprint_takes_a_name_that_is_not_utf8(tmp_path):
    (tmp_path / "attention.py").write_text("x = 1\n")
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.py"), "wb") as f:
        f.write(b"y = 2\n")
    a = fingerprint(str(tmp_path))
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.py"), "wb") as f:
        f.write(b"y = 3\n")
    assert fingerprint(str(tmp_path)) != a


def test_the_fingerprint_opens_no_pipe_and_follows_no_link(tmp_path):
    """A copy holding a pipe blocked the grading process forever (its submission's results never
    came); a link to /dev/zero read without end."""
    (tmp_path / "attention.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "a_pipe.py")
    os.symlink("/dev/zero", tmp_path / "b_zero.py")
    got: list = []
    t = threading.Thread(target=lambda: got.append(fingerprint(str(tmp_path))), daemon=True)
    t.start()
    t.join(20)
    assert got, "fingerprint() blocked on a pipe or a link in the copy"
    os.unlink(tmp_path / "b_zero.py")
    os.symlink("/dev/null", tmp_path / "b_zero.py")
    assert fingerprint(str(tmp_path)) != got[0]


def test_check_results_are_plain_text():
    from parity_tests.oracle import check, gradescope_results

    res = check("sdpa", os.path.join(HOSTILE, "forged_results_line.py") + ":attention", examples=2)
    results = gradescope_results(res)
    assert res.verdict == "raised" and results["output_format"] == "text"
    for t in results["tests"]:
        assert not any(line.startswith("match") for line in t["output"].splitlines()), t["output"]


def test_names_that_clean_alike_at_the_length_limit_still_get_output_folders(tmp_path):
    """Two 254-byte folder names that clean alike: the second one's `-2` made a 256-byte name, and
    `grade` raised ENAMETOOLONG writing its results, after grading the class: no gradebook."""
    from parity_tests.oracle.grading.batch import grade

    subs = tmp_path / "subs"
    subs.mkdir()
    for tail in ("\x01\x01", "\x02\x02"):            # 63 four-byte characters + 2 bytes each
        (subs / ("\U0001F600" * 63 + tail)).mkdir()   # no entry file: no worker is started
    out = grade(str(subs), _spec(tmp_path), str(tmp_path / "out"), quiet=True)
    names = [g["student"] for g in out["graded"]]
    assert len(set(names)) == 2 and all(len(n.encode()) <= 255 for n in names)
    assert (tmp_path / "out" / "gradebook.csv").exists()
    assert all((tmp_path / "out" / n / "results.json").exists() for n in names)


def _deep(root, total: int) -> str:
    """A folder under `root` whose path below it is about `total` bytes (200-byte names)."""
    d = str(root)
    for _ in range(total // 201):
        d = os.path.join(d, "d" * 200)
    os.makedirs(d)
    return d


def test_a_path_too_long_to_copy_is_refused_before_reading(tmp_path):
    with open(os.path.join(_deep(tmp_path, 1400), "attention.py"), "w") as f:
        f.write("x = 1\n")
    with pytest.raises(SubmissionError, match="longer than"):
        read_submission(str(tmp_path), "attention.py")


def test_the_gradebook_columns_are_the_specs_whoever_sorts_first(tmp_path, monkeypatch):
    """A student whose whole grading failed (here: the private copy's path passes PATH_MAX, the
    temporary folder being deep) has one row "grading"; sorted first, it named the gradebook's
    columns and shifted every classmate's verdicts."""
    import csv

    from parity_tests.oracle.grading.batch import grade

    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC + 'hidden = { seed = 9, examples = 2, points = 5 }\n')
    monkeypatch.setenv("TMPDIR", _deep(tmp_path / "tmp", 3300))   # read by the grading processes
    subs = tmp_path / "subs"
    with open(os.path.join(_deep(subs / "aaa", 900), "notes.txt"), "w") as f:
        f.write("x")
    (subs / "bob").mkdir()                                          # no entry file: no worker
    grade(str(subs), str(spec), str(tmp_path / "out"), quiet=True)
    rows = list(csv.reader(open(tmp_path / "out" / "gradebook.csv")))
    assert rows[0] == ["student", "score", "max_score", "status", "sdpa", "sdpa (hidden)"]
    assert rows[1][0] == "aaa" and rows[1][4:] == ["oracle_error", "oracle_error"], rows
    assert rows[2][0] == "bob" and rows[2][4:] == ["load_error", "load_error"], rows
