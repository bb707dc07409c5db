"""The gradient checker itself: it must pass correct backwards, catch wrong ones, and leave no trace."""
import numpy as np
import pytest

from npformer.checks.gradcheck import GradcheckReport, check_pair, gradcheck, numerical_gradient, rel_error
from npformer.layers.dropout import Dropout
from npformer.layers.embedding import Embedding
from npformer.layers.linear import Linear, linear_backward, linear_forward
from npformer.layers.module import Module, Parameter

TOL = 1e-6


# --------------------------------------------------------------------------------------------------
# small modules written for these tests (independent of the layers under test elsewhere)
# --------------------------------------------------------------------------------------------------
class ScaleMul(Module):
    """y = dropout(tanh(x * w)) * z, w (D,): two float inputs, one parameter, optional dropout."""

    def __init__(self, D=4, p=0.0, seed=0, bug=None):
        super().__init__()
        self.w = Parameter(np.random.default_rng(seed).standard_normal(D))
        self.drop = Dropout(p, rng=np.random.default_rng(seed + 7))
        self.bug = bug

    def forward(self, x, z):
        t = np.tanh(x * self.w.data)
        d = self.drop(t)
        self._cache = (x, z, t, d)
        return d * z

    def backward(self, g):
        x, z, t, d = self._cache
        dd = g * z
        dt = self.drop.backward(dd)
        if self.bug == "skip_dropout":
            dt = dd                                    # forgets the dropout mask
        da = dt * (1 - t * t)
        dw = (da * x).reshape(-1, x.shape[-1]).sum(0)
        if self.bug == "half_param":
            dw = dw / 2                                # wrong parameter gradient
        self.w.grad += dw
        dz = None if self.bug == "none_for_z" else g * d
        return da * self.w.data, dz


class DictModel(Module):
    """Returns a dict from backward, like the models: only parameters are checked."""

    def __init__(self):
        super().__init__()
        self.lin = Linear(3, 2, dtype="float64", rng=np.random.default_rng(1))

    def forward(self, x):
        return self.lin(x)

    def backward(self, g):
        return {"input": self.lin.backward(g)}


class Noisy(Module):
    """Draws fresh noise outside any Dropout: not a deterministic function."""

    def __init__(self):
        super().__init__()
        self.rng = np.random.default_rng(0)

    def forward(self, x):
        self._cache = 1
        return x + self.rng.standard_normal(x.shape)

    def backward(self, g):
        return g


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# --------------------------------------------------------------------------------------------------
# primitives
# --------------------------------------------------------------------------------------------------
def test_numerical_gradient_matches_known_derivative_and_restores():
    x = rnd(3, 4)
    g = rnd(3, 4, seed=1)
    before = x.copy()
    n = numerical_gradient(lambda: float(np.sum(np.sin(x) * g)), x, 1e-5)
    assert np.array_equal(x, before)                  # bit-for-bit restored
    assert np.max(np.abs(n - np.cos(before) * g)) < 1e-9


def test_numerical_gradient_subset_and_restores_on_error():
    x = rnd(5)
    before = x.copy()
    n = numerical_gradient(lambda: float(np.sum(x ** 3)), x, 1e-5, indices=[4, 1])
    assert n.shape == (2,)
    assert np.allclose(n, 3 * before[[4, 1]] ** 2, rtol=1e-8)

    calls = []

    def boom():
        calls.append(1)
        if len(calls) == 2:
            raise KeyError("boom")
        return 0.0

    with pytest.raises(KeyError):
        numerical_gradient(boom, x, 1e-3)
    assert np.array_equal(x, before)


def test_rel_error_definition():
    assert rel_error(np.array([1.0, 2.0]), np.array([1.0, 2.5])) == pytest.approx(0.5 / 2.5)
    assert rel_error(np.zeros(3), np.zeros(3)) == 0.0
    assert rel_error(np.array([1e-9]), np.array([0.0]), floor=1e-3) == pytest.approx(1e-6)
    assert rel_error(np.array([1e-9]), np.array([0.0])) == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------------
# gradcheck on modules
# --------------------------------------------------------------------------------------------------
def test_correct_module_passes_with_dropout_active():
    m = ScaleMul(p=0.4)
    x, z = rnd(2, 3, 4), rnd(2, 3, 4, seed=1)
    rep = gradcheck(m, x, z)
    assert isinstance(rep, GradcheckReport)
    assert set(rep.errors) == {"input:x", "input:z", "w"}
    assert rep.passed and rep.max_error < TOL, str(rep)
    assert m.drop.last_mask is not None and not m.drop.last_mask.all()   # dropout really active
    rep.raise_if_failed()


@pytest.mark.parametrize("bug, culprit", [("half_param", "w"), ("skip_dropout", "input:x"),
                                          ("none_for_z", "input:z")])
def test_planted_wrong_backward_fails(bug, culprit):
    m = ScaleMul(p=0.4, bug=bug)
    rep = gradcheck(m, rnd(2, 3, 4), rnd(2, 3, 4, seed=1))
    assert not rep.passed
    assert rep.errors[culprit] > 1e-2
    assert culprit in rep.failures()
    assert "FAIL" in str(rep) and culprit in str(rep)
    with pytest.raises(AssertionError, match=culprit):
        rep.raise_if_failed()


def test_wrong_parameter_gradient_in_a_real_layer_is_caught():
    class BadLinear(Linear):
        def backward(self, dout):
            dx = super().backward(dout)
            self.weight.grad[0, 0] += 1e-3             # a single wrong entry
            return dx

    m = BadLinear(3, 2, dtype="float64", rng=np.random.default_rng(0))
    rep = gradcheck(m, rnd(4, 3))
    assert not rep.passed and rep.details["weight"].worst_index == (0, 0)


def test_inputs_and_parameters_are_restored_and_grads_hold_analytic():
    m = ScaleMul(p=0.3)
    x, z = rnd(2, 4), rnd(2, 4, seed=1)
    x0, z0, w0 = x.copy(), z.copy(), m.w.data.copy()
    gradcheck(m, x, z)
    assert np.array_equal(x, x0) and np.array_equal(z, z0) and np.array_equal(m.w.data, w0)
    # .grad holds the analytic gradient of this check (zeroed before, accumulated once)
    g = np.random.default_rng(0).standard_normal((2, 4))     # the default upstream (seed 0)
    t = np.tanh(x0 * w0)
    expect = (g * z0 * m.drop.last_mask / 0.7 * (1 - t * t) * x0).sum(0)
    assert np.allclose(m.w.grad, expect, rtol=1e-12, atol=1e-14)


def test_same_array_passed_twice_is_checked_per_argument():
    m = ScaleMul()
    x = rnd(3, 4)
    rep = gradcheck(m, x, x)                          # x and z are one array: copies keep them apart
    assert rep.passed, str(rep)


def test_dict_backward_checks_parameters_only():
    rep = gradcheck(DictModel(), rnd(5, 3))
    assert set(rep.errors) == {"lin.weight", "lin.bias"}
    assert "input:x" in rep.skipped
    assert rep.passed, str(rep)


def test_max_per_tensor_checks_a_seeded_subset():
    m = Linear(6, 5, dtype="float64", rng=np.random.default_rng(0))
    x = rnd(4, 6)
    a = gradcheck(m, x, max_per_tensor=7)
    b = gradcheck(m, x, max_per_tensor=7)
    assert a.details["weight"].checked == 7 and a.details["bias"].checked == 5
    assert a.details["input:x"].checked == 7
    assert a.details["weight"].worst_index == b.details["weight"].worst_index
    assert a.passed


def test_embedding_padding_row_is_skipped_not_failed():
    e = Embedding(6, 3, padding_idx=2, dtype="float64", rng=np.random.default_rng(0))
    rep = gradcheck(e, np.array([[2, 1, 5], [2, 2, 0]]))
    assert rep.passed, str(rep)
    assert rep.details["weight"].checked == 15       # 6 rows x 3, less the padding row
    assert any("padding" in why for why in rep.skipped.values())


def test_rejects_float32_inputs_and_parameters():
    with pytest.raises(TypeError, match=r"inputs\[0\].*float64"):
        gradcheck(ScaleMul(), rnd(2, 4).astype(np.float32), rnd(2, 4))
    with pytest.raises(TypeError, match="weight"):
        gradcheck(Linear(3, 2), rnd(2, 3))            # float32 parameters


def test_rejects_bad_arguments():
    m = ScaleMul()
    with pytest.raises(ValueError, match="upstream"):
        gradcheck(m, rnd(2, 4), rnd(2, 4), upstream=rnd(4, 2))
    with pytest.raises(ValueError, match="max_per_tensor"):
        gradcheck(m, rnd(2, 4), rnd(2, 4), max_per_tensor=0)
    with pytest.raises(TypeError, match="module"):
        gradcheck(lambda x: x, rnd(2))
    with pytest.raises(RuntimeError, match="deterministic"):
        gradcheck(Noisy(), rnd(3))


def test_nothing_to_check_is_an_error():
    from npformer.layers.activations import Activation
    with pytest.raises(ValueError, match="nothing to check"):
        gradcheck(Activation("relu"), rnd(3), check_inputs=False)


def test_explicit_upstream_is_used():
    m = Linear(3, 2, dtype="float64", rng=np.random.default_rng(0))
    x = rnd(4, 3)
    g = rnd(4, 2, seed=5)
    gradcheck(m, x, upstream=g)
    assert np.allclose(m.bias.grad, g.sum(0), rtol=1e-13)


# --------------------------------------------------------------------------------------------------
# check_pair on functional pairs
# --------------------------------------------------------------------------------------------------
def test_check_pair_passes_linear_and_catches_a_wrong_pair():
    x, W, b = rnd(2, 3, 4), rnd(5, 4, seed=1), rnd(5, seed=2)
    rep = check_pair(linear_forward, linear_backward, (x, W, b))
    assert set(rep.errors) == {"input:x", "input:W", "input:b"}
    assert rep.passed, str(rep)

    def bad_backward(dout, cache):
        dx, dW, db = linear_backward(dout, cache)
        return dx, dW * 1.01, db                       # 1% off
    assert not check_pair(linear_forward, bad_backward, (x, W, b)).passed


def test_check_pair_tuple_output_needs_output_index():
    def fwd(x):
        return (2 * x, x), None

    def bwd(dout, cache):
        return 2 * dout

    with pytest.raises(ValueError, match="output_index"):
        check_pair(fwd, bwd, (rnd(3),))
    assert check_pair(fwd, bwd, (rnd(3),), output_index=0).passed


def test_check_pair_extra_gradients_must_be_none():
    def fwd(x):
        return x * 3, None

    def bwd(dout, cache):
        return 3 * dout, np.ones(2)

    with pytest.raises(ValueError, match="float array inputs"):
        check_pair(fwd, bwd, (rnd(3),))
