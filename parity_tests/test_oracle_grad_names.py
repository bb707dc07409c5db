"""Parameter gradients a hand-written NumPy backward keeps under names of its own: read by name
patterns (`W_delta`, `gradients['dL/dW']`) or found by behaviour (arrays that changed during the
backward, told apart by shape, place, name, or a finite-difference test through the candidate's own
forward). A planted gradient bug under such names is never a match; gradients that cannot be read
make the verdict `missing_gradient`, never `match`."""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise import grad_behaviour

HERE = candidate_path()
GRADS = os.path.join(HERE, "grad_name_styles.py")
N = 8
IN_OUT = {"weight_layout": "in_out"}

RIGHT = [
    ("delta_attributes", "ffn", "DeltaFFN", None),
    ("list_in_reverse_order", "ffn", "OwnNamesFFN", "found by behaviour"),
    ("gradients_dict_dl_d", "layernorm", "GradientsDictNorm", None),
    ("same_shapes_no_names", "layernorm", "OwnNamesNorm", "finite-difference"),
]


@pytest.mark.parametrize("component,name,note", [r[1:] for r in RIGHT], ids=[r[0] for r in RIGHT])
def test_gradients_under_own_names_are_compared(component, name, note):
    res = check(component, f"{GRADS}:{name}", examples=N, **IN_OUT)
    assert res.verdict == "match", render_text(res)
    assert not any(k.startswith("grad_param") for k in res.not_checked), res.not_checked
    if note:
        assert any(note in n for n in res.notes), res.notes


@pytest.mark.parametrize("component,name,quantity", [
    ("ffn", "OwnNamesFFNBadGrad", "grad_param:linear1"),
    ("layernorm", "OwnNamesNormBadGrad", "grad_param:weight"),
])
def test_a_gradient_bug_under_own_names_is_caught(component, name, quantity):
    res = check(component, f"{GRADS}:{name}", examples=30, **IN_OUT)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity.startswith(quantity), res.quantity


def test_gradients_kept_out_of_reach_are_never_a_match():
    res = check("ffn", f"{GRADS}:HiddenGradsFFN", examples=N, **IN_OUT)
    assert res.verdict == "missing_gradient", render_text(res)
    text = render_text(res)
    assert "the forward matched" in text and "grads(obj)" in text


def test_behaviour_never_guesses_between_arrays_it_cannot_tell_apart():
    before = {}
    after = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    found, unsure = grad_behaviour.find(before, after, {"gain": (2,), "shift": (2,)}, set(), [])
    assert found == {} and set(unsure) == {"gain", "shift"}


def test_behaviour_takes_a_unique_shape_the_name_or_the_finite_difference_order():
    after = {"x1": np.ones((2, 3)), "x2": np.ones(3), "shift_step": np.zeros(2),
             "other": np.full(2, 5.0)}
    want = {"W": (2, 3), "b": (3,), "shift": (2,), "scale": (2,)}
    found, unsure = grad_behaviour.find({}, after, want, set(), [])
    assert found["W"][0] == "x1" and found["b"][0] == "x2" and found["shift"][0] == "shift_step"
    assert found["scale"][0] == "other"
    # two same-shape arrays, no names, two parameters of that shape: the check orders them
    after = {"p": np.array([1.0, 0.0]), "q": np.array([0.0, 1.0])}
    found, _ = grad_behaviour.find({}, after, {"g": (2,), "h": (2,)}, set(), [],
                                   check=lambda c, a: bool(a[1] == 1.0) == (c == "g"))
    assert found["g"][0] == "q" and found["h"][0] == "p"
    # ... but one parameter: never chosen between (test_oracle_gradient_copies.py)
    found, unsure = grad_behaviour.find({}, after, {"g": (2,)}, set(), [],
                                        check=lambda c, a: bool(a[1] == 1.0))
    assert found == {} and unsure == {"g": ["p", "q"]}


def test_arrays_unchanged_by_the_backward_are_not_gradients():
    same = {"cache": np.ones(3)}
    found, unsure = grad_behaviour.find(same, {"cache": np.ones(3)}, {"b": (3,)}, set(), [])
    assert found == {} and unsure == {}


def test_finite_difference_agreement_of_a_quadratic():
    w0 = np.array([0.5, -1.0, 2.0])

    def loss(cand, w):
        return float(np.sum(w ** 2))
    assert grad_behaviour.fd_agrees(loss, "w", w0, 2 * w0) is True
    assert grad_behaviour.fd_agrees(loss, "w", w0, w0) is False
