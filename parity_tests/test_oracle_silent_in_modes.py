"""A run in another mode that raised was not compared (a candidate raising on a non-contiguous
input, or at a constructor flag's other value, fails loudly wherever it happens). The harness's
own verdicts raised there (`mutates_input`, `missing_gradient`, `wrong_type`) counted as such a
raise: wrong code that also nudged an input or detached its output on that path matched. They keep
their verdict now, a detached output being compared with zero gradients (sandbox/raised_there.py);
right code working on copies, or raising, matches.
"""
from __future__ import annotations

import os

import pytest
import torch

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.options import CandidateProblem
from parity_tests.oracle.reading.frameworks import NumpyOps
from parity_tests.oracle.sandbox.modes import WHAT
from parity_tests.oracle.sandbox.raised_there import candidate_raised

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "silent_in_modes.py")
RIGHT = os.path.join(candidate_path(), "copies_in_modes.py")
LAYOUTS = (WHAT["strided"], WHAT["relaid"])

ATTACKS = [
    ("sdpa", "nudging_attention", "mutates_input", LAYOUTS),
    ("mha", "FlaggedAttention", "mutates_input", (WHAT["bias_ctor"],)),
]


@pytest.mark.parametrize("component,name,verdict,modes", ATTACKS, ids=[a[1] for a in ATTACKS])
def test_a_harness_verdict_in_another_mode_is_not_left_uncompared(component, name, verdict, modes):
    res = check(component, f"{HOSTILE}:{name}", examples=10)
    assert res.verdict == verdict, res.message
    assert res.message.startswith(modes), res.message


def test_an_output_detached_in_another_mode_is_compared_there_and_earns_no_group():
    """Its values are compared, its gradients as zeros (never `missing_gradient`, after which no
    group gets a search of its own: the output, unscaled there, scored)."""
    res = check("sdpa", f"{HOSTILE}:detached_attention", examples=10, score_groups=True)
    assert res.verdict == "mismatch", res.message
    assert res.detail["mode"] in ("strided", "relaid")
    assert res.group_searches and all(g["status"] == "failed" for g in res.group_searches.values())


@pytest.mark.parametrize("component,name", [
    ("sdpa", "copying_attention"),          # torch: a contiguous copy scaled in place
    ("sdpa", "copying_numpy_attention"),    # NumPy: its own C-ordered copy scaled in place
    ("sdpa", "viewing_attention"),          # raises on a non-contiguous q: left uncompared
    ("mha", "FlaggedAttention"),            # honours bias=False; scales a copy in place
])
def test_right_code_working_on_copies_or_raising_matches(component, name):
    res = check(component, f"{RIGHT}:{name}", examples=10)
    assert res.verdict == "match", res.message


def _raised(fn) -> BaseException:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("did not raise")


def test_only_the_candidates_own_exceptions_are_left_uncompared():
    assert candidate_raised(_raised(lambda: [].pop()))
    assert not candidate_raised(_raised(lambda: (_ for _ in ()).throw(
        CandidateProblem("mutates_input", "changed"))))
    # the oracle's reader failing on a returned object is about the answer, not a raise of its own
    assert not candidate_raised(_raised(lambda: NumpyOps().to_np(torch.empty(2, device="meta"))))
