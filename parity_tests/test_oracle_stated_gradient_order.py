"""Gradients a NumPy backward returns after the input gradient, where the candidate states the order
of its parameters itself (`self.params = [self.gamma, self.beta]`, or a `params()` method: its own
update zips them with what backward returns). Arrays of one shape in that order are compared in it,
never moved by the finite-difference test: a gain's and a shift's gradients swapped against the
code's own list (its update moves the gain by the shift's gradient) matched before and are now a
mismatch; right code returning them in its stated order still matches, and a norm that states no
order still has them placed by the test (returned_gradients.py, NormReturningShiftFirst). A wrong
array among square ones the test cannot place goes by elimination and is compared: a mismatch."""
from __future__ import annotations

import os
import textwrap

import numpy as np

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise import returned_grads

HOSTILE = os.path.join(os.path.dirname(__file__), "oracle_hostile", "own_order_swapped_grads.py")

RIGHT = textwrap.dedent('''
    import numpy as np


    class NormStatedOrder:
        def __init__(self, d_model, eps=1e-5):
            self.eps, self.gamma, self.beta = eps, np.ones(d_model), np.zeros(d_model)

        def params(self):
            return [self.beta, self.gamma]

        def forward(self, x):
            self.inv = 1.0 / np.sqrt(x.var(-1, keepdims=True) + self.eps)
            self.xhat = (x - x.mean(-1, keepdims=True)) * self.inv
            return self.gamma * self.xhat + self.beta

        def backward(self, dout):
            g = dout * self.gamma
            dx = self.inv * (g - g.mean(-1, keepdims=True)
                             - self.xhat * (g * self.xhat).mean(-1, keepdims=True))
            axes = tuple(range(dout.ndim - 1))
            return dx, dout.sum(axes), (dout * self.xhat).sum(axes)
''')


def test_gradients_swapped_against_the_stated_order_are_a_mismatch():
    res = check("layernorm", f"{HOSTILE}:NormStatedOrderSwapped", examples=12)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert res.quantity in ("grad_param:weight", "grad_param:bias"), text
    assert "the order self.params states" in text, text


def test_gradients_in_the_order_a_params_method_states_match(tmp_path):
    path = tmp_path / "stated_norm.py"
    path.write_text(RIGHT)
    res = check("layernorm", f"{path}:NormStatedOrder", examples=12)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "the order its params() states" in text, text


class _Holder:
    def __init__(self):
        self.a, self.b, self.c = np.zeros(2), np.ones(2), np.ones(3)
        self.params = [self.b, self.c, self.a]


def test_stated_order_is_read_from_a_list_holding_the_arrays_themselves():
    h = _Holder()
    assert returned_grads.stated_order(h, {"a": h.a, "b": h.b}) == (["b", "a"], "self.params")
    assert returned_grads.stated_order(h, {"a": h.a.copy(), "b": h.b}) is None   # not held itself
    assert returned_grads.stated_order(object(), {"a": h.a, "b": h.b}) is None


def test_a_stated_order_keeps_the_test_from_moving_the_arrays():
    dx, first, second = np.zeros((1, 2)), np.full(2, 1.0), np.full(2, 2.0)

    def check_(cand, g):                 # the test places them the other way round
        return (cand == "a") == (g is second)

    moved = returned_grads.read((dx, first, second), 1, {"a": (2,), "b": (2,)}, check_)
    kept = returned_grads.read((dx, first, second), 1, {"a": (2,), "b": (2,)}, check_, "self.params")
    assert moved["a"][0] is not None and np.array_equal(moved["a"][0], second), moved
    assert np.array_equal(kept["a"][0], first) and np.array_equal(kept["b"][0], second), kept


def test_a_wrong_gradient_the_test_cannot_place_is_compared_where_elimination_puts_it():
    path = os.path.join(os.path.dirname(HOSTILE), "probed_gradient_only.py")
    res = check("ffn", f"{path}:FeedForwardTransposedFirstGradient", examples=25,
                settings={"d_model": 4, "d_ff": 4})
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert res.quantity == "grad_param:linear1.weight", text
