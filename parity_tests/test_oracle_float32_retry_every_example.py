"""The float32 re-check (core/float32_tables.retry) trusts a float32 MATCH only if the float64 run is
off by float32 rounding on every example, not only on the shrunk one. Code that ignores its mask
in float64 alone (and rounds like float32 code elsewhere) shrank to an example without a mask,
differing by float32 rounding; the float32 re-check matched and that MATCH replaced the float64
MISMATCH. Now a float64 search judged at float32 tolerances (Options.tolerance_dtype) must match
too, and its counterexample is reported when it does not.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core import float32_tables
from parity_tests.oracle.core.options import Options
from parity_tests.oracle.core.verdicts import CheckResult

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRONG = os.path.join(ROOT, "parity_tests", "oracle_hostile", "float64_only_mask_skip.py")
RIGHT = os.path.join(candidate_path(), "float32_softmax_masks.py")


def test_code_wrong_in_float64_alone_stays_a_mismatch():
    res = check("mha", f"{WRONG}:MultiHeadAttention")
    assert res.verdict == "mismatch", res.message
    assert res.options["dtype"] == "float64" and res.options["tolerance_dtype"] == "float32"
    assert res.example["mask"]["kind"] != "none"          # a masked example, wrong by far
    assert "wrong in float64, not float32 code" in res.notes[0]
    again = check("mha", f"{WRONG}:MultiHeadAttention", replay=res.example)
    assert again.verdict == "mismatch"                    # the replay shows it at float64 too


def test_its_right_twin_still_matches_under_the_float32_assumption():
    res = check("mha", f"{RIGHT}:MultiHeadAttention")
    assert res.verdict == "match", res.message
    assert res.notes[0].startswith("assumption:") and "at float32 tolerances, every quantity" \
        in res.notes[0]


def _result(verdict, **kw):
    return CheckResult(verdict=verdict, exit_code=0 if verdict == "match" else 1, component="mha",
                       candidate="x.py:M", message=verdict, **kw)


def test_the_float32_match_is_taken_only_after_float64_matches_at_float32_tolerances():
    calls = []

    def runner(third):
        def run(opts, replay=None, only=None, scale=1.0):
            calls.append((opts.dtype, opts.tolerance_dtype))
            return _result("match") if opts.dtype == "float32" else third
        return run

    def first():
        return _result("mismatch", float32_sized=True, example={"seed": 1})

    failed = _result("mismatch", example={"seed": 2})
    assert float32_tables.retry("mha", first(), Options(), runner(failed)) is failed
    assert calls == [("float32", None), ("float64", "float32")]
    taken = float32_tables.retry("mha", first(), Options(), runner(_result("match")))
    assert taken.verdict == "match" and taken.notes[0].startswith("assumption:")
    kept = float32_tables.retry("mha", first(), Options(), runner(_result("timeout")))
    assert kept.verdict == "mismatch" and kept.example == {"seed": 1}
    assert "timeout" in kept.notes[-1]


def test_a_spec_cannot_ask_for_float32_tolerances_on_a_float64_check(tmp_path):
    from parity_tests.oracle.grading.spec import SpecError, load_spec
    p = tmp_path / "assignment.toml"
    p.write_text('[assignment]\nname = "a"\nentry_file = "attention.py"\n\n[[check]]\n'
                 'component = "sdpa"\nentry = "attention"\npoints = 10\n'
                 'options = { tolerance_dtype = "float32" }\n')
    with pytest.raises(SpecError, match="tolerance_dtype"):
        load_spec(str(p))
    p.write_text(p.read_text().replace('options = { tolerance_dtype = "float32" }\n', ""))
    assert load_spec(str(p)).checks[0].options == {}
