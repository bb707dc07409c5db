"""NumPy layers whose backward returns their parameter gradients (a dict after the input gradient,
keys `<part>_<name>`, or arrays after it) instead of keeping them: the gradients are read from what
backward returned and right code matches (it was MISSING_GRADIENT); arrays of one shape returned in
another order than the parameters are placed by a finite-difference test; a planted gradient bug
stays a mismatch, on that gradient; two keys naming one parameter with different arrays (a module's
returned dict, a CS231n pair's) are never a match."""
from __future__ import annotations

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text

FILE = candidate_path("returned_gradients.py")


@pytest.mark.parametrize("component, name, where", [
    ("layernorm", "NormReturningDict", "the dict backward returned, key 'gamma'"),
    ("layernorm", "NormReturningShiftFirst", "placed by a finite-difference test"),
    ("ffn", "FeedForwardReturningDict", "the dict backward returned, key 'up_w'"),
    ("ffn", "FeedForwardReturningTuple", "by order"),
])
def test_gradients_returned_by_backward_are_read(component, name, where):
    res = check(component, f"{FILE}:{name}", examples=12)
    assert res.verdict == "match", render_text(res)
    assert "grad_param:linear1.weight" in res.checked or "grad_param:weight" in res.checked, res.checked
    assert any(where in n for n in res.notes), res.notes


def test_a_planted_bug_in_a_returned_gradient_is_a_mismatch():
    res = check("ffn", f"{FILE}:FeedForwardReturningDictBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch" and res.quantity == "grad_param:linear1.weight", render_text(res)


@pytest.mark.parametrize("target", ["NormReturningTwoSpellingsBUG", "norm_forward,norm_backward_two_spellings_BUG"])
def test_two_different_gradients_for_one_parameter_are_never_a_match(target):
    res = check("layernorm", f"{FILE}:{target}", examples=10)
    assert res.verdict == "missing_gradient", render_text(res)
    assert "returned different arrays" in render_text(res) or "cannot read" in render_text(res), render_text(res)
