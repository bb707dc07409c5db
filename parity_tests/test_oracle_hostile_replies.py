"""A submission shares its worker's process, so it can rewrite every reply the worker sends
(through sys.modules). Such a reply may narrow what is compared or fail the check; it must never
leave a quantity unjudged, hide a gap, or choose how the parent compares.

Each hostile file in parity_tests/oracle_hostile/ rewrites one part of the reply: no arrays at
all (`omits_output`), the reason for missing gradients (`forged_gradient_reasons`), a note with
the parent's own float32 hint (`forged_float32_hint`), the output's dtype (`forged_dtype`); or
fails naming a quantity of its own making (`odd_quantity`, `leaks_hidden_inputs`); or says its
code fixes a width the parent cannot afford to draw (`claims_huge_width`). Each got a
match, an oracle failure or a leak before the parent stopped believing that part.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.oracle import check, gradescope_results
from parity_tests.oracle.core.completeness import REQUIREMENTS, find_gaps
from parity_tests.oracle.core.verdicts import VERDICTS
from parity_tests.oracle.reading.findings import Findings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")


def spec(name: str) -> str:
    return f"{os.path.join(HOSTILE, name)}.py:attention"


@pytest.fixture(scope="module")
def right_public():
    """The honest submission's public check, shared by the gradescope tests that only read it."""
    return check("sdpa", spec("right"), examples=3)


def test_a_reply_without_the_output_is_malformed_not_a_match():
    res = check("sdpa", spec("omits_output"), examples=5)
    assert res.verdict == "crashed", (res.verdict, res.message)
    assert "without the output" in res.message
    graded = check("sdpa", spec("omits_output"), examples=5, require=["masks", "parameters"])
    assert graded.verdict == "crashed" and graded.exit_code == VERDICTS["crashed"][0]


def test_forged_reasons_for_missing_gradients_do_not_hide_the_gap():
    res = check("sdpa", spec("forged_gradient_reasons"), examples=5, require=REQUIREMENTS)
    assert res.verdict == "missing_gradient", (res.verdict, res.message)
    assert "gradients" in res.gaps
    # the same forward-only code, honest, fails the same way: the lie changes nothing
    honest = check("sdpa", spec("right"), examples=5, require=REQUIREMENTS, shrink=False)
    assert honest.verdict == "missing_gradient"


def test_gradient_gaps_are_decided_by_the_parents_absent_set_not_by_reason_text():
    from parity_tests.oracle.core.completeness import ungraded

    lie = {"grad_input:q": "the candidate has no such parameter",
           "grad_param:q_proj.weight": "the candidate has no such parameter",
           "grad_param:q_proj.bias": "anything"}
    assert set(ungraded(lie, absent=["q_proj.bias"])) == {"grad_input:q", "grad_param:q_proj.weight"}

    class Opts:
        name_map: dict = {}
        settings: dict = {}

    from parity_tests.oracle.components import get
    gaps = find_gaps(get("sdpa"), Findings(), Opts(), lie, absent=())
    assert "gradients" in gaps and "grad_input:q" in gaps["gradients"]


def test_a_note_from_the_worker_cannot_buy_the_float32_rerun():
    res = check("sdpa", spec("forged_float32_hint"), examples=5)
    assert res.verdict == "mismatch", (res.verdict, res.message)
    assert res.options["dtype"] == "float64"
    assert not any(n.startswith("assumption:") for n in res.notes)


def test_float32_output_claimed_by_the_worker_is_checked_on_the_values():
    res = check("sdpa", spec("forged_dtype"), examples=25, dtype="float32")
    assert res.verdict == "wrong_dtype", (res.verdict, res.message)
    assert "float32" in res.message


def test_a_failure_naming_an_unknown_quantity_is_the_submissions_verdict():
    res = check("sdpa", spec("odd_quantity"), examples=3)
    assert res.verdict == "mismatch" and res.exit_code == 1, (res.verdict, res.message)
    assert res.quantity is None


def test_a_hidden_failure_does_not_carry_the_submissions_words_to_the_student(right_public):
    public = right_public
    hidden = check("sdpa", spec("leaks_hidden_inputs"), examples=3, seed=777)
    assert hidden.verdict == "mismatch"
    res = gradescope_results(public, hidden, hidden_visibility="visible")
    shown = [t["output"] for t in res["tests"] if t["name"].endswith("(hidden)")]
    assert shown and not any("LEAK" in s for s in shown), shown


def test_a_hidden_gap_is_named_in_gradescope_results_never_explained(right_public):
    """Gap reasons quote the worker (why a gradient is missing): from a hidden check they could
    carry the hidden inputs to the student's "everything compared" test."""
    import dataclasses

    public = dataclasses.replace(right_public, gaps={})
    hidden = dataclasses.replace(public, gaps={"gradients": "grad_input:q (LEAK 0.1257)"})
    res = gradescope_results(public, hidden, hidden_visibility="visible")
    text = "\n".join(t["output"] for t in res["tests"])
    assert "LEAK" not in text
    assert "gradients: not compared on the hidden examples" in text


def test_sizes_a_worker_says_the_code_fixes_are_drawn_only_when_affordable():
    from parity_tests.oracle.core.backend import unaffordable

    refused = unaffordable(Findings(fixed_sizes={"d_model": 4096}, d_ff_ratio=16))
    assert refused is not None and refused.verdict == "interface_error"
    assert "d_model = 4096" in refused.message and "16 x d_model" in refused.message
    assert unaffordable(Findings(fixed_sizes={"d_model": 4096})) is not None
    for width, ratio in ((24, None), (512, 4), (1024, 4), (2048, None)):     # tutorial widths
        assert unaffordable(Findings(fixed_sizes={"d_model": width}, d_ff_ratio=ratio)) is None
    assert unaffordable(Findings(d_ff_ratio=16)) is None        # the search's own widths


def test_a_claimed_huge_width_ends_before_the_parent_builds_an_example():
    pytest.importorskip("torch")
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = check("encoder_layer", f"{os.path.join(HOSTILE, 'claims_huge_width')}.py:EncoderLayer",
                examples=2)
    assert res.verdict == "interface_error", (res.verdict, res.message)
    assert res.examples_run == 0
    grew_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grew_mib < 512, grew_mib
