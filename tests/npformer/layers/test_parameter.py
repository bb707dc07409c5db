"""Parameter.grad bookkeeping: zero_grad() fills zeros in place, accumulate() adds."""
import numpy as np

from npformer.layers.linear import Linear
from npformer.layers.module import Parameter


def test_accumulate_adds_and_zero_grad_restarts_the_sum():
    rng = np.random.default_rng(0)
    p = Parameter(rng.standard_normal((3, 2)))
    buf = p.grad
    g1, g2, g3 = (rng.standard_normal((3, 2)) for _ in range(3))
    p.accumulate(g1)
    p.accumulate(g2)
    np.testing.assert_allclose(p.grad, g1 + g2, rtol=0, atol=1e-15)
    p.zero_grad()
    assert p.grad is buf and not p.grad.any()       # zeros, in the same array
    p.accumulate(g3)
    np.testing.assert_array_equal(p.grad, g3)
    assert p.grad is buf                            # always the same array
    g3[...] = 0
    assert p.grad.any()                             # added into .grad, not the caller's array kept


def test_a_plain_parameter_has_no_hidden_gradient_state():
    p = Parameter(np.ones(4))
    assert set(vars(p)) == {"data", "grad"}
    p.accumulate(np.arange(4.0))
    p.zero_grad()
    assert set(vars(p)) == {"data", "grad"} and not p.grad.any()


def test_grad_set_to_none_then_accumulated():
    p = Parameter(np.ones(2, dtype=np.float32))
    p.grad = None
    p.zero_grad()                                   # nothing to zero
    assert p.grad is None
    p.accumulate(np.array([1.0, 2.0], dtype=np.float32))
    assert p.grad.dtype == np.float32 and p.grad.tolist() == [1.0, 2.0]


def test_second_backward_after_zero_grad_equals_a_fresh_one():
    """Stale gradients of an earlier step must not leak into the next one."""
    rng = np.random.default_rng(1)
    lin = Linear(5, 4, dtype="float64", rng=rng)
    x1, x2 = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 3, 5))
    g1, g2 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    lin(x1)
    lin.backward(g1)
    lin.zero_grad()
    lin(x2)
    lin.backward(g2)
    # expected from the definition dW = sum over rows of g^T x, db = sum of g
    np.testing.assert_allclose(lin.weight.grad, g2.reshape(-1, 4).T @ x2.reshape(-1, 5), atol=1e-12)
    np.testing.assert_allclose(lin.bias.grad, g2.sum(axis=(0, 1)), atol=1e-12)
