"""NumPy modules whose base class has a `__call__` (a small `Module` running `forward`) and whose
parts keep their gradients in `gradients` dicts under keys of their own (`dLdW`): such objects are
walked when the oracle looks for the gradients a backward produced (before, a callable object was
skipped as if it were a function, and the verdict was `missing_gradient`). A planted gradient bug
in the same style is still caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "callable_grad_dicts.py")


@pytest.mark.parametrize("component,name", [("ffn", "CallableFFN"), ("layernorm", "CallableNorm")])
def test_gradients_of_callable_parts_are_read_and_compared(component, name):
    res = check(component, f"{CANDS}:{name}", examples=6)
    assert res.verdict == "match", render_text(res)
    assert not any(k.startswith("grad_param") for k in res.not_checked), res.not_checked
    assert any("gradients.dLd" in n and "found by behaviour" in n for n in res.notes), res.notes


@pytest.mark.parametrize("component,name,quantity", [
    ("ffn", "CallableFFNBadGrad", "grad"),
    ("layernorm", "CallableNormBadGrad", "grad_param:weight"),
])
def test_a_gradient_bug_in_callable_parts_is_caught(component, name, quantity):
    res = check(component, f"{CANDS}:{name}", examples=20, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity.startswith(quantity), res.quantity
