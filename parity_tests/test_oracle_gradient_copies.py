"""A NumPy backward keeping its parameter gradients in more places than it has parameters: copies
holding the same values are read from either place; places holding different values (a right set
beside the wrong one the update uses, unnamed or under two names) are ambiguous: the gradient is
reported unread with the places named (`missing_gradient`), never chosen by a finite-difference
test or by the first name read (`reading/recognise/grad_behaviour.py`, `reading/slots.py`)."""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise import grad_behaviour

COPIES = candidate_path("gradient_copies.py")
DECOYS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile", "gradient_decoys.py")


@pytest.mark.parametrize("name", ["NormCopiedForPrinting", "NormTwoNamesOneGradient"])
def test_gradients_kept_twice_with_equal_values_are_compared(name):
    res = check("layernorm", f"{COPIES}:{name}", examples=8)
    assert res.verdict == "match", render_text(res)
    assert not any(k.startswith("grad_param") for k in res.not_checked), res.not_checked


@pytest.mark.parametrize("name", ["NormCopiedForPrinting_BUG", "NormTwoNamesOneGradient_BUG"])
def test_a_bug_kept_twice_is_a_mismatch(name):
    res = check("layernorm", f"{COPIES}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity == "grad_param:bias", res.quantity


@pytest.mark.parametrize("name, places", [("UnnamedDecoys", ("for_printing.0", "to_apply.0")),
                                          ("NamedDecoys", ("dscale", "grads['scale']"))])
def test_disagreeing_gradient_sets_are_never_chosen_between(name, places):
    res = check("layernorm", f"{DECOYS}:{name}", examples=8)
    assert res.verdict == "missing_gradient", render_text(res)
    assert all(p in res.message for p in places), res.message
    assert "which one the code uses cannot be told" in res.message


def test_more_disagreeing_arrays_than_parameters_of_a_shape_are_ambiguous_whatever_the_test_says():
    after = {"kept": np.array([1.0, 0.0]), "other": np.array([0.0, 1.0]), "w": np.ones((2, 3))}
    found, unsure = grad_behaviour.find({}, after, {"g": (2,), "W": (2, 3)}, set(), [],
                                        check=lambda c, a: bool(a[1] == 1.0))
    assert set(found) == {"W"} and unsure == {"g": ["kept", "other"]}
    # as many arrays as parameters: the test places them
    found, unsure = grad_behaviour.find({}, after, {"g": (2,), "h": (2,)}, set(), [],
                                        check=lambda c, a: bool(a[1] == 1.0) == (c == "g"))
    assert found["g"][0] == "other" and found["h"][0] == "kept" and not unsure
