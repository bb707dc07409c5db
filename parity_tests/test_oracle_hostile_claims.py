"""A grade means everything the assignment asks was compared: what the worker (which shares the
submission's process) reports about the candidate, and what its signature leaves out, can narrow
the comparison only into a failing verdict when grading, never into full marks.

Hostile submissions in parity_tests/oracle_hostile/ (each is wrong where it stopped being
compared): claims_no_masks (rewrites the worker's report through sys.modules), no_mask_argument,
claims_no_gradients, claims_absent_biases, claims_one_sequence, hardcoded_eps, ignores_d_ff (takes
d_ff and ignores it: the width read from its weights was drawn, `match` and full marks). The right candidates of
parity_tests/oracle_candidates/ still match when everything is required.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.completeness import REQUIREMENTS
from parity_tests.oracle.core.report import gradescope_results

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
CANDS = candidate_path()

CASES = [  # component, hostile file:name, the requirement whose gap must fail it, verdicts
    ("sdpa", "claims_no_masks.py:attention", "masks", {"incomplete"}),
    ("sdpa", "no_mask_argument.py:attention", "masks", {"incomplete"}),
    ("sdpa", "claims_no_gradients.py:attention", "gradients", {"missing_gradient"}),
    ("mha", "claims_absent_biases.py:MultiHeadAttention", "parameters", {"incomplete"}),
    ("sdpa", "claims_one_sequence.py:attention", "batch", {"incomplete"}),
    ("encoder_layer", "hardcoded_eps.py:EncoderLayer", None, {"mismatch"}),
    ("ffn", "ignores_d_ff.py:FeedForward", "sizes", {"incomplete"}),
]


@pytest.mark.parametrize("component,target,gap,verdicts", CASES, ids=[c[1] for c in CASES])
def test_graded_check_fails_what_was_not_compared(component, target, gap, verdicts):
    res = check(component, os.path.join(HOSTILE, target), examples=8, require=REQUIREMENTS)
    assert res.verdict in verdicts, (res.verdict, res.message)
    assert res.exit_code == 1
    if gap is not None:
        assert gap in res.gaps and res.gaps[gap] in res.message
    assert "eps" not in res.gaps


@pytest.mark.parametrize("component,target,gap,verdicts", CASES[:5], ids=[c[1] for c in CASES[:5]])
def test_quick_check_says_what_it_did_not_compare_and_results_are_never_full(component, target,
                                                                            gap, verdicts):
    res = check(component, os.path.join(HOSTILE, target), examples=8)
    assert gap in res.gaps                      # found by the parent, whatever the verdict
    results = gradescope_results(res, points=1.0)
    assert results["score"] < results["max_score"]
    assert any(t["name"].endswith("everything compared") and t["score"] == 0
               for t in results["tests"])


def test_quick_check_reports_the_candidates_own_eps_as_a_gap():
    res = check("encoder_layer", os.path.join(HOSTILE, "hardcoded_eps.py:EncoderLayer"),
                examples=4)
    assert "eps" in res.gaps and "1e-06" in res.gaps["eps"]
    assert "the reference's LayerNorm epsilon: 1e-06" in res.notes


@pytest.mark.parametrize("component,target", [
    ("sdpa", "torch_attention.py:attention"),
    ("mha", "torch_mha.py:MultiHeadAttention"),
    ("encoder_layer", "torch_layers.py:EncoderLayer"),
])
def test_right_code_still_matches_when_everything_is_required(component, target):
    res = check(component, os.path.join(CANDS, target), examples=8, require=REQUIREMENTS)
    assert res.verdict == "match", res.message
    assert res.gaps == {}
    results = gradescope_results(res, points=1.0)
    assert results["score"] == results["max_score"]


# 3 public and 2 hidden examples: the two hostile submissions fail on a gap the parent finds
# whatever the values (masks never compared), and the right one must match on both searches; more
# examples add worker calls, not reach (the searches' values are tested in test_oracle_sandbox).
SPEC = """
[assignment]
name = "attention"
entry_file = "attention.py"
examples = 3
seed = 0
timeout = 20

[[check]]
name = "sdpa"
component = "sdpa"
entry = "attention"
points = 10
hidden = { seed = 7, examples = 2, points = 5 }
"""


def test_in_grade_a_rewritten_claim_scores_zero_with_the_reason_and_right_code_full(tmp_path):
    import json
    import shutil

    from parity_tests.oracle.grading.batch import grade
    subs = tmp_path / "subs"
    for student, src in (("ann_right", os.path.join(CANDS, "torch_attention.py")),
                         ("bob_claims", os.path.join(HOSTILE, "claims_no_masks.py")),
                         ("cy_nomask", os.path.join(HOSTILE, "no_mask_argument.py"))):
        (subs / student).mkdir(parents=True)
        shutil.copy(src, subs / student / "attention.py")
    shutil.copy(os.path.join(HOSTILE, "unguard.py"), subs / "bob_claims")   # its harness-check switch
    (tmp_path / "assignment.toml").write_text(SPEC)
    res = grade(str(subs), str(tmp_path / "assignment.toml"), str(tmp_path / "out"), jobs=2,
                quiet=True)
    score = {g["student"]: g["score"] for g in res["graded"]}
    assert score == {"ann_right": 15.0, "bob_claims": 0.0, "cy_nomask": 0.0}
    for student in ("bob_claims", "cy_nomask"):
        results = json.loads((tmp_path / "out" / student / "results.json").read_text())
        assert "masks were not compared" in results["tests"][0]["output"]
