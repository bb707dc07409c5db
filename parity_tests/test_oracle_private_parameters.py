"""NumPy classes keeping every weight private (`self._gamma = Param(...)`, parts as `self._inner`):
when the public attributes hold no weight at all, the `_names` holding Parameter objects or parts
are read too (named without the underscore), and the check runs. Before, such code was an
INTERFACE_ERROR, "the candidate holds no parameters or weight arrays at all". Planted bugs:
MISMATCH."""
from __future__ import annotations

import numpy as np
import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.slots import numpy_space

FILE = "private_parameters.py"


@pytest.mark.parametrize("component,name", [("layernorm", "HiddenLayerNorm"), ("ffn", "HiddenFeedForward")])
def test_private_parameters_are_read_when_nothing_public_holds_a_weight(candidate_file, component, name):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=10)
    assert res.verdict == "match", render_text(res)


@pytest.mark.parametrize("component,name", [("layernorm", "HiddenLayerNormBUG"),
                                            ("ffn", "HiddenFeedForwardBUG")])
def test_planted_bugs_behind_private_parameters_are_mismatches(candidate_file, component, name):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_private_arrays_stay_unread_beside_public_weights():
    class Mixed:
        def __init__(self):
            self.weight = np.ones(3)
            self._scratch = np.zeros(3)

    _, slots = numpy_space(Mixed())
    assert list(slots) == ["weight"]
