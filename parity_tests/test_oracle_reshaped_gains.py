"""A parameter a NumPy forward reshapes to the input's rank (unit axes added, values unchanged) is
no weight update of its own: the repeat mode (sandbox/modes.py) compares its values, unit axes
aside. A real change of value, also on a reshaped gain, stays MUTATES_INPUT; planted bugs MISMATCH."""
from __future__ import annotations

import numpy as np
import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.sandbox.modes import same_values


@pytest.fixture
def gains(candidate_file):
    return candidate_file("reshaped_gains.py")


def test_a_gain_expanded_to_the_input_rank_inside_forward_matches(gains):
    res = check("layernorm", f"{gains}:ExpandingLayerNorm", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_variance_beside_that_expansion_is_a_mismatch(gains):
    res = check("layernorm", f"{gains}:ExpandingLayerNormBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_step_on_the_reshaped_gain_still_changes_its_own_parameter(gains):
    res = check("layernorm", f"{gains}:ExpandingSteppingLayerNormBUG", examples=10)
    assert res.verdict == "mutates_input", render_text(res)
    assert "changed its own parameter 'gamma'" in res.message


@pytest.mark.parametrize("now, before, same", [
    (np.arange(3.0)[None, None], np.arange(3.0), True),        # unit axes added
    (np.arange(3.0), np.arange(3.0)[None], True),              # removed
    (np.arange(3.0)[None, None] + 1e-12, np.arange(3.0), False),
    (np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2), False),
    (np.arange(6.0).reshape(6), np.arange(6.0).reshape(2, 3), False),
    (None, np.arange(3.0), False),
])
def test_only_unit_axes_are_set_aside(now, before, same):
    assert same_values(now, before) is same
