"""Parameter gradients a NumPy backward returns after the input gradient in an order of its own
(`return dx, db2, dW2, db1, dW1`) are read by shape and compared: right code matches (it was
MISSING_GRADIENT, "cannot read the gradient of 'W1'"), and a planted bug in one of them is a
mismatch on a bias. Where two parameters share a shape, the finite-difference test through the
forward places them (float64); where it cannot run (float32 examples) they are NOT COMPARED there,
said why, instead of a guess failing right code, and where it runs and places none they are
compared in the order returned (the planted bug with every shape shared is still a mismatch).
Gradients returned with a shape that is not their parameter's (a norm's gain summed over the batch
axis only, as a layer written for (T, D) inputs does on (B, T, D) ones) are a WRONG_SHAPE on that
gradient, no longer "cannot read"."""
from __future__ import annotations

import numpy as np

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise import returned_grads

FILE = "returned_gradient_orders.py"
PARAMS = ("grad_param:linear1.weight", "grad_param:linear1.bias", "grad_param:linear2.weight",
          "grad_param:linear2.bias")


def test_gradients_returned_last_layer_first_are_read_by_shape(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:FeedForwardReturningLastFirst", examples=12)
    assert res.verdict == "match", render_text(res)
    assert set(PARAMS) <= set(res.checked), res.checked
    assert any("in what backward returned, by shape" in n for n in res.notes), res.notes


def test_the_planted_bug_in_a_gradient_returned_out_of_order_is_a_mismatch(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:FeedForwardReturningLastFirstBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity in ("grad_param:linear2.bias", "grad_param:linear1.bias"), render_text(res)


def test_a_planted_bug_among_shared_shapes_is_still_a_mismatch(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:FeedForwardReturningLastFirstBUG", examples=25,
                settings={"d_model": 4, "d_ff": 4}, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_shared_shapes_not_placed_in_float32_are_not_compared_there(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:FeedForwardReturningLastFirst", examples=25,
                dtype="float32", settings={"d_model": 4, "d_ff": 4})
    text = render_text(res)
    assert res.verdict == "match", text
    assert "order other than the parameters'" in res.gaps.get("gradients", ""), text


def test_a_returned_gradient_of_the_wrong_shape_is_reported_on_it(candidate_file):
    res = check("layernorm", f"{candidate_file(FILE)}:NormReturningPerPositionBUG", examples=10, shrink=False)
    assert res.verdict == "wrong_shape" and res.quantity == "grad_param:weight", render_text(res)


def test_a_test_failing_for_one_parameter_places_it_by_elimination():
    """The finite-difference test can fail for a right gradient near a ReLU's kink: the one it
    places (W2) is taken, and the one left over goes to the parameter left over (W1)."""
    dx, db, dW1, dW2 = np.zeros((1, 2)), np.ones(3), np.full((2, 2), 1.0), np.full((2, 2), 2.0)

    def check_(cand, g):
        return cand == "W2" and g is dW2            # W1's test fails for both arrays

    found = returned_grads.read((dx, db, dW2, dW1), 1, {"W1": (2, 2), "W2": (2, 2), "b": (3,)}, check_)
    assert np.array_equal(found["W1"][0], dW1) and np.array_equal(found["W2"][0], dW2), found
