"""A submission's worker looks like a plain `python FILE` process to it: its command line names
the submission (not the oracle's boot line or modules), its working directory has no oracle name,
its environment carries no variable a plain shell lacks. A submission right only when it sees the
oracle's worker (`oracle_hostile/detects_sandbox_process.py`) used to match; it is now judged on
what it computes in plain use. (What a submission can still tell apart: docs/ORACLE.md, "Red-team
round 9".)"""
from __future__ import annotations

import os

from parity_tests.oracle import check

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile")


def test_a_submission_right_only_in_the_oracle_s_process_is_a_mismatch():
    res = check("sdpa", os.path.join(HOSTILE, "detects_sandbox_process.py:attention"), examples=4, shrink=False)
    assert res.verdict == "mismatch", res.message
