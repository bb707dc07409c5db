"""A probe's call past its time limit. The recognisers call the candidate under a 10 s limit
(reading/calls.run_limited, a thread asked to stop at the limit); a call that swallows the request
(`oracle_hostile/outlives_probe.py`, its first call spinning for a minute) kept running in the
worker while the check went on and matched, the probe having decided nothing. The worker now waits
a moment for such a call and ends the check `timeout`, saying which call did not finish.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

SPEC = os.path.join(os.path.dirname(__file__), "oracle_hostile", "outlives_probe.py") + ":SelfAttention"


def test_a_probe_call_that_outlives_its_limit_ends_the_check_as_a_timeout():
    res = check("mha", SPEC, runs=1, examples=2)
    assert res.verdict == "timeout", render_text(res)
    assert "did not finish within its time limit" in res.message, res.message
    assert res.examples_run == 0          # nothing was compared beside the stray call
