"""The first mismatching example of a check is run once more (core/runner.Checker._unrepeatable):
an output that changes between calls makes the verdict `nondeterministic`, even where the
example's own repeats agreed by chance (an always-on dropout on a 1 x 1 x 4 example)."""
import os
from types import SimpleNamespace

import numpy as np

from parity_tests.oracle import check
from parity_tests.oracle.core.runner import Checker

CANDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_candidates", "numpy_part_buffers.py")


def _checker_with_rerun(output):
    """A Checker whose backend's next run returns `output` (its repeat agreeing with it)."""
    reply = SimpleNamespace(values={"output": output}, again=[{"output": output.copy()}], mapping=[])
    return SimpleNamespace(backend=SimpleNamespace(run=lambda case, runs: reply), runs=2)


def _first_reply(output):
    return SimpleNamespace(values={"output": output}, again=[{"output": output.copy()}], mapping=[])


def test_an_output_that_changes_on_the_rerun_is_nondeterministic():
    first = np.array([[0.5, -1.0, 2.0, 0.25]])
    rerun = first * np.array([[1.0, 0.0, 1.0, 1.0]]) * 2.0          # another dropout mask
    out = Checker._unrepeatable(_checker_with_rerun(rerun), case=None, rep=_first_reply(first))
    assert out is not None and out.verdict == "nondeterministic"
    assert out.quantity == "output" and "run 1 and run 3" in out.message


def test_an_output_that_repeats_keeps_the_mismatch():
    first = np.array([[0.5, -1.0, 2.0, 0.25]])
    assert Checker._unrepeatable(_checker_with_rerun(first.copy()), case=None,
                                 rep=_first_reply(first)) is None


def test_a_check_of_an_always_dropping_layer_says_nondeterministic_on_its_first_example():
    for seed in range(3):
        res = check("encoder_layer", f"{CANDS}:AlwaysDroppingEncoderLayer", examples=8, seed=seed)
        assert res.verdict == "nondeterministic", (seed, res.verdict)
