"""A NumPy class listing its weight arrays a second time for an optimiser (`self.params =
[self.W1, self.b1, ...]`, backward setting `self.grads` in the same order): the list's items are the
attributes' own arrays, not parameters of their own, and grads[i] is the gradient of params[i].
Before, a list of random weights was "randomly initialised arrays the reference has no counterpart
for" (INTERFACE_ERROR). Planted bug in a listed gradient: MISMATCH."""
from __future__ import annotations

import numpy as np

from parity_tests.oracle import check, render_text

FILE = "listed_parameters.py"


def test_a_parameter_list_of_the_attributes_own_arrays_is_read_once(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:ListedFeedForward", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "grad_param:linear1.bias" in text.split("not compared")[0], text


def test_a_planted_bug_in_a_listed_gradient_is_a_mismatch(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:ListedFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_lists_of_arrays_no_attribute_holds_keep_their_slots():
    from parity_tests.oracle.reading.slots import numpy_space

    class Layers:
        def __init__(self):
            self.W = np.ones((2, 2))
            self.extra = [np.zeros(2), self.W]

    _, slots = numpy_space(Layers())
    assert sorted(slots) == ["W", "extra.0"]
