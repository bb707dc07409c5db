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


def test_gradients_that_are_all_zero_are_not_taken_for_copies_of_each_other():
    """A dead ReLU zeroes the first layer's weight and bias gradients alike; the bias's must still be
    read from its own part, not from the other layer's as if the zeros were a copy of dW."""
    import numpy as np

    from parity_tests.oracle.reading.recognise import grad_behaviour as gb
    zero, g = np.zeros((1, 1)), np.array([[0.7]])
    before = {k: np.full((1, 1), 9.0) for k in ("up.store.dw", "up.store.db", "down.store.dw", "down.store.db")}
    after = {"up.store.dw": zero, "up.store.db": zero.copy(), "down.store.dw": g * 0.3, "down.store.db": g}
    want = {"up.w": (1, 1), "up.b": (1, 1), "down.w": (1, 1), "down.b": (1, 1)}
    found, unsure = gb.find(before, after, want, set(want), [], None)
    assert {c: p for c, (p, _, _) in found.items()} == {
        "up.w": "up.store.dw", "up.b": "up.store.db", "down.w": "down.store.dw", "down.b": "down.store.db"}
