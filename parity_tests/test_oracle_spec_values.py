"""The instructor's mistakes caught before grading: every spec value is checked for its type and
range when the spec is read (a one-line SpecError naming the key), so no submission runs on a spec
that would grade a correct class 0 (`memory_mb = 1`, `timeout = inf`, ...) or oddly (`points =
inf`, `seed = "abc"`, ...). Nothing is read, graded or written before that.
"""
from __future__ import annotations

import os
import shutil

import pytest

from parity_tests.oracle.grading.batch import grade
from parity_tests.oracle.grading.spec import SpecError, load_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BASE = {"name": '"a"', "entry_file": '"attention.py"', "examples": "3", "seed": "0",
        "timeout": "5", "runs": "2", "memory_mb": "4096"}
CHECK = {"component": '"sdpa"', "entry": '"attention"', "points": "10"}


def write(tmp_path, assignment: dict | None = None, check: dict | None = None) -> str:
    a = {**BASE, **(assignment or {})}
    c = {**CHECK, **(check or {})}
    text = "[assignment]\n" + "".join(f"{k} = {v}\n" for k, v in a.items())
    text += "\n[[check]]\n" + "".join(f"{k} = {v}\n" for k, v in c.items())
    p = tmp_path / "assignment.toml"
    p.write_text(text)
    return str(p)


BAD_ASSIGNMENT = [("memory_mb", "1"), ("timeout", "inf"), ("timeout", "nan"), ("timeout", "0"),
                  ("require_gradients", '"yes"'), ("entry_file", '"../x.py"'),
                  ("entry_file", '"/etc/x.py"'), ("seed", '"abc"'), ("seed", "-1"),
                  ("forbid_import", '"npformer"'), ("allow_import", "[1]"),
                  ("examples", "1000000000"), ("examples", "true"), ("runs", "100"),
                  ("require", '["everything"]'), ("name", "3")]
BAD_CHECK = [("points", "inf"), ("points", "true"), ("points", "-1"),
             ("settings", "{ d_model = -1 }"), ("settings", "{ max_len = 0 }"),
             ("settings", "{ nope = 3 }"), ("hidden", "{ points = -5 }"),
             ("hidden", '{ seed = "abc" }'), ("hidden", "{ examples = 1000000000 }"),
             ("hidden", '{ strict = "yes" }'), ("entry", '"../other.py:f"'),
             ("entry", '"/etc/x.py:f"'), ("options", '{ timeout = inf }'),
             ("options", '{ mask_convention = "sideways" }')]


@pytest.mark.parametrize("key,value", BAD_ASSIGNMENT, ids=[f"{k}={v}" for k, v in BAD_ASSIGNMENT])
def test_a_bad_assignment_value_is_one_line_naming_the_key(tmp_path, key, value):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, assignment={key: value}))
    assert key in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("key,value", BAD_CHECK, ids=[f"{k}={v}" for k, v in BAD_CHECK])
def test_a_bad_check_value_is_one_line_naming_the_key(tmp_path, key, value):
    with pytest.raises(SpecError) as e:
        load_spec(write(tmp_path, check={key: value}))
    assert key in str(e.value) and "\n" not in str(e.value)


def test_a_deeply_nested_toml_is_a_spec_error(tmp_path):
    p = tmp_path / "assignment.toml"
    p.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(SpecError):
        load_spec(str(p))


def test_a_bad_spec_grades_nobody_and_writes_nothing(tmp_path):
    subs = tmp_path / "subs"
    (subs / "ann").mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "parity_tests", "oracle_hostile", "right.py"),
                subs / "ann" / "attention.py")
    with pytest.raises(SpecError, match="memory_mb"):
        grade(str(subs), write(tmp_path, assignment={"memory_mb": "1"}), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_a_good_spec_still_loads(tmp_path):
    spec = load_spec(write(tmp_path, check={"settings": "{ max_len = 8 }",
                                            "hidden": "{ seed = 5, examples = 4, points = 2 }"}))
    assert spec.max_score == 12 and spec.checks[0].settings == {"max_len": 8}
