"""gradcheck and check_pair name their own bad arguments: a negative or fractional seed was NumPy's
"expected non-negative integer" (or taken), eps="x" a bare comparison TypeError, eps=inf or True
taken, and a NaN upstream gradient blamed on the module's `dout`."""
import numpy as np
import pytest

import npformer as nf


def linear():
    return nf.Linear(3, 2, dtype="float64", rng=np.random.default_rng(0))


X = np.random.default_rng(1).standard_normal((2, 3))


@pytest.mark.parametrize("kwargs,says", [
    (dict(seed=-1), r"seed: expected an int from 0 to 2\*\*63 - 1, got -1"),
    (dict(seed=1.5), "seed: expected an int"), (dict(seed=True), "seed: expected an int"),
    (dict(eps="x"), "eps: expected a positive float, got 'x'"),
    (dict(eps=float("inf")), "eps: expected a positive float, got inf"),
    (dict(eps=True), "eps: expected a positive float, got True"),
    (dict(tol=float("nan")), "tol: expected a positive float, got nan"),
    (dict(upstream=np.full((2, 2), np.nan)), "upstream: expected finite values, got 4 NaN/inf"),
], ids=str)
def test_gradcheck_names_its_arguments(kwargs, says):
    with pytest.raises(ValueError, match=says):
        nf.gradcheck(linear(), X, **kwargs)


def test_check_pair_names_its_seed():
    m = linear()
    with pytest.raises(ValueError, match="seed: expected an int"):
        nf.check_pair(nf.linear_forward, nf.linear_backward, [X, m.weight.data, m.bias.data], seed=-2)


def test_numpy_numbers_are_taken():
    report = nf.gradcheck(linear(), X, seed=np.int64(3), tol=np.float32(1e-6))
    assert max(report.errors.values()) < 1e-6
