"""LazyZeroParameter: the plain Parameter's gradients without writing zeros on zero_grad().

Bound: a copy of g and 0 + g differ only where g holds -0.0 (the plain sum gives +0.0), so the
gradients are compared as bits where g is not a zero and as numbers everywhere."""
import copy

import numpy as np
import pytest

from npformer.fast.fused_adam import FusedAdam
from npformer.fast.lazy_grad import LazyZeroParameter, lazy_zero_grad
from npformer.layers.linear import Linear
from npformer.layers.module import Parameter


def _same_as_plain(lazy: np.ndarray, plain: np.ndarray) -> None:
    np.testing.assert_array_equal(lazy, plain)                      # as numbers (NaN where NaN)
    nonzero = plain != 0
    assert (lazy.view(np.uint8).reshape(lazy.shape + (-1,))[nonzero]
            == plain.view(np.uint8).reshape(plain.shape + (-1,))[nonzero]).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lazy_gradients_equal_the_plain_ones_over_steps(dtype):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 3)).astype(dtype)
    plain, lazy = Parameter(data.copy()), Parameter(data.copy())
    assert lazy_zero_grad([lazy]) == 1 and type(lazy) is LazyZeroParameter
    for step in range(4):
        plain.zero_grad()
        lazy.zero_grad()
        for _ in range(step % 3 + 1):                               # one use, or a tied weight's two, three
            g = rng.standard_normal((4, 3)).astype(dtype)
            g[0, 0] = -0.0                                          # the one case the bits may differ
            g[1, 1] = np.nan if step == 3 else g[1, 1]
            plain.accumulate(g)
            lazy.accumulate(g)
        _same_as_plain(lazy.grad, plain.grad)


def test_zero_grad_only_marks_and_the_next_gradient_overwrites():
    p = LazyZeroParameter(np.ones((2, 2)))
    buf = p.grad
    p.accumulate(np.full((2, 2), 5.0))
    p.zero_grad()
    assert p.grad_is_zero and buf[0, 0] == 5.0                      # no zeros written yet
    g = np.full((2, 2), 2.0)
    p.accumulate(g)
    assert p.grad is buf and not p.grad_is_zero
    np.testing.assert_array_equal(p.grad, 2.0)
    g[...] = 0
    assert p.grad.all()                                             # a copy, not the caller's array


def test_reading_a_zeroed_gradient_shows_zeros_in_the_same_array():
    p = LazyZeroParameter(np.ones(4))
    p.accumulate(np.arange(4.0))
    buf = p.grad
    p.zero_grad()
    assert p.grad is buf and not p.grad.any()
    p.accumulate(np.full(4, 2.0))                                   # adding to real zeros now
    np.testing.assert_array_equal(p.grad, np.full(4, 2.0))


def test_grad_set_to_none_then_accumulated():
    p = LazyZeroParameter(np.ones(2, dtype=np.float32))
    p.grad = None
    p.zero_grad()
    assert p.grad is None
    p.accumulate(np.array([1.0, 2.0], dtype=np.float32))
    assert p.grad.dtype == np.float32 and p.grad.tolist() == [1.0, 2.0]


def test_switching_back_writes_the_marked_zeros_and_leaves_a_plain_parameter():
    lin = Linear(3, 2, dtype="float64", rng=np.random.default_rng(0))
    params = list(lin.named_parameters())
    assert lazy_zero_grad(params) == 2 and lazy_zero_grad(params) == 0
    lin.weight.accumulate(np.ones((2, 3)))
    lin.zero_grad()
    assert lazy_zero_grad(params, on=False) == 2
    assert type(lin.weight) is Parameter and set(vars(lin.weight)) == {"data", "grad"}
    assert not lin.weight.grad.any()


def test_a_copied_model_keeps_the_mark():
    p = Parameter(np.ones(3))
    lazy_zero_grad([p])
    p.accumulate(np.ones(3))
    p.zero_grad()
    q = copy.deepcopy(p)
    assert type(q) is LazyZeroParameter and not q.grad.any()


def test_the_fused_optimizer_installs_it_and_the_plain_model_never_has_it():
    lin = Linear(3, 2, dtype="float32", rng=np.random.default_rng(0))
    assert all(type(p) is Parameter for p in lin.parameters())
    FusedAdam(lin.named_parameters(), lr=1e-3, threads=1)
    assert all(type(p) is LazyZeroParameter for p in lin.parameters())


def test_the_benchmarks_fast_backend_zeroes_lazily_and_the_plain_one_does_not():
    from benchmarks.backends import BACKENDS, make_inputs, make_session, master_weights
    from benchmarks.configs import CONFIGS
    bc = CONFIGS["tiny"]
    kinds = {}
    for name in ("np-f32", "np-f32-plain"):
        s = make_session(bc, BACKENDS[name], master_weights(bc), make_inputs(bc, bc.transformer_config()), 1)
        kinds[name] = {type(p) for p in s.model.parameters()}
    assert kinds == {"np-f32": {LazyZeroParameter}, "np-f32-plain": {Parameter}}
