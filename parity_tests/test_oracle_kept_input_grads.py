"""NumPy layers whose backward returns None and keeps the input's gradient on the object
(`self.store["dx"] = dx`, weights' gradients beside it): the input gradient is read from there (the
one nearest the object, not a part's), and checked. Before, such a backward was WRONG_TYPE. A
backward that returns None and keeps nothing leaves the input gradient not compared, said so, and
never a match of it. Planted bugs in the kept gradient: MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text

FILE = "cache_chained_layers.py"


@pytest.mark.parametrize("component,name", [("layernorm", "StoredGradNorm"),
                                            ("ffn", "StoredGradFeedForward")])
def test_an_input_gradient_kept_on_the_object_is_read_and_matches(candidate_file, component, name):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "grad_input:x" in text and "was read from store.dx" in text, text


@pytest.mark.parametrize("component,name", [("layernorm", "StoredGradNormBUG"),
                                            ("ffn", "StoredGradFeedForwardBUG")])
def test_planted_bugs_in_a_kept_input_gradient_are_mismatches(candidate_file, component, name):
    res = check(component, f"{candidate_file(FILE)}:{name}", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert "grad_input:x" in text, text


def test_a_backward_returning_nothing_and_keeping_nothing_leaves_the_input_gradient_uncompared(
        candidate_file):
    res = check("positional", f"{candidate_file(FILE)}:TableOnlyPositional", examples=10)
    text = render_text(res)
    assert res.verdict != "wrong_type", text
    assert "NOT COMPARED (gradients)" in text and "backward(dout) returned None" in text, text
