"""numerical_gradient and rel_error, the two primitives of a gradient check, name what is wrong with
their arguments instead of answering wrongly.

Before: an integer `x` gave a gradient of zeros (x[i] + eps rounds back to x[i]), `rel_error` of
arrays of shapes (3, 1) and (3,) broadcast them to (3, 3) and returned a number, `eps=0` divided by
zero, and a non-callable `f`, a read-only `x`, out-of-range `indices`, a vector-valued `f` and
arrays of other shapes ended in Python's or NumPy's own errors."""
import numpy as np
import pytest

from npformer.checks.numerical import numerical_gradient, rel_error


def x3():
    return np.array([1.0, 2.0, 3.0])


def test_an_integer_x_is_refused_not_differentiated_to_zeros():
    x = np.array([1, 2, 3])
    with pytest.raises(TypeError, match="x: expected a float array .* got dtype int64"):
        numerical_gradient(lambda: float(np.sum(x.astype(float) ** 2)), x)


def test_rel_error_refuses_arrays_of_other_shapes_instead_of_broadcasting():
    with pytest.raises(ValueError, match=r"rel_error: expected a and n of the same shape, got "
                                         r"\(3, 1\) and \(3,\)"):
        rel_error(np.ones((3, 1)), np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("call,error,says", [
    (lambda x: numerical_gradient(5, x), TypeError, "f: expected a callable"),
    (lambda x: numerical_gradient(lambda: 1.0, [1.0]), TypeError, "x: expected the numpy array"),
    (lambda x: numerical_gradient(lambda: 1.0, x, eps=0), ValueError, "eps: expected a finite float > 0"),
    (lambda x: numerical_gradient(lambda: 1.0, x, eps=float("nan")), ValueError, "eps: expected"),
    (lambda x: numerical_gradient(lambda: 1.0, x, indices=[3]), ValueError,
     r"indices: expected flat indices in \[0, 3\)"),
    (lambda x: numerical_gradient(lambda: 1.0, x, indices=[-1]), ValueError, "indices: expected"),
    (lambda x: numerical_gradient(lambda: 1.0, x, indices=[[0]]), ValueError, "indices: expected a 1-D"),
    (lambda x: numerical_gradient(lambda: x * 2, x), ValueError,
     r"f: expected a scalar \(the loss\), got a value of shape \(3,\)"),
])
def test_bad_arguments_are_named(call, error, says):
    x = x3()
    with pytest.raises(error, match=says):
        call(x)
    assert np.array_equal(x, x3())                              # x restored


def test_a_read_only_x_is_named():
    x = x3()
    x.flags.writeable = False
    with pytest.raises(ValueError, match="x: expected a writeable array"):
        numerical_gradient(lambda: float(np.sum(x)), x)


def test_a_loss_of_one_element_is_a_scalar_and_plain_calls_still_work():
    """f() returning an array of one element (a loss of shape (1,)) ended in NumPy's "only
    0-dimensional arrays can be converted"."""
    x = x3()
    assert np.allclose(numerical_gradient(lambda: np.array([np.sum(x ** 2)]), x), 2 * x3())
    assert numerical_gradient(lambda: float(np.sum(x)), x, indices=[]).shape == (0,)
    assert rel_error(np.array([1.0, 2.0]), np.array([1.0, 2.5])) == pytest.approx(0.2)
