"""Dropout: inverted scaling, seeded masks, eval identity, record/replay for single modules and models."""
import numpy as np
import pytest

from npformer import dropout_forward  # the checked public function
from npformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks
from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.dropout import Dropout, dropout_backward
from npformer.layers.module import Module

TOL = 1e-6


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


class TwoDrops(Module):
    """x -> drop1 -> inner.drop -> out, to test model-level record/replay by dotted name."""

    def __init__(self, p=0.5, seed=0):
        super().__init__()
        self.drop1 = Dropout(p, rng=np.random.default_rng(seed))
        self.inner = Module()
        self.inner.drop = Dropout(p, rng=np.random.default_rng(seed + 1))

    def forward(self, x):
        return self.inner.drop(self.drop1(x))

    def backward(self, g):
        return self.drop1.backward(self.inner.drop.backward(g))


def test_pair_is_inverted_dropout():
    x = rnd(3, 4)
    mask = rnd(3, 4, seed=1) > 0
    y, cache = dropout_forward(x, 0.25, mask)
    assert np.array_equal(y, np.where(mask, x / 0.75, 0.0))
    g = rnd(3, 4, seed=2)
    assert np.allclose(dropout_backward(g, cache), np.where(mask, g / 0.75, 0.0), rtol=1e-15)
    y0, c0 = dropout_forward(x, 0.25, None)            # no mask: identity
    assert y0 is x and dropout_backward(g, c0) is g


def test_pair_gradient():
    mask = rnd(2, 5, seed=1) > 0
    rep = check_pair(dropout_forward, dropout_backward, (rnd(2, 5), 0.3, mask))
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_module_gradcheck_in_training_mode():
    d = Dropout(0.5, rng=np.random.default_rng(0))
    rep = gradcheck(d, rnd(4, 6))
    assert rep.passed and rep.max_error < TOL, str(rep)
    assert 0 < d.last_mask.sum() < d.last_mask.size


def test_seeded_masks_are_bit_identical_and_dtype_independent():
    x = rnd(5, 7)
    a = Dropout(0.3, rng=np.random.default_rng(42))
    b = Dropout(0.3, rng=np.random.default_rng(42))
    assert np.array_equal(a(x), b(x)) and np.array_equal(a.last_mask, b.last_mask)
    c = Dropout(0.3, rng=np.random.default_rng(42))
    y32 = c(x.astype(np.float32))
    assert y32.dtype == np.float32
    assert np.array_equal(c.last_mask, a.last_mask)    # same draw for float32 input


def test_keep_rate_is_one_minus_p():
    n, p = 200_000, 0.3
    d = Dropout(p, rng=np.random.default_rng(0))
    d(np.ones(n))
    kept = d.last_mask.mean()
    sigma = np.sqrt(p * (1 - p) / n)
    assert abs(kept - (1 - p)) < 6 * sigma             # binomial: 6 standard deviations


def test_eval_and_p_zero_are_identity_and_draw_nothing():
    x = rnd(3, 3)
    for d in (Dropout(0.5, rng=np.random.default_rng(0)).eval(), Dropout(0.0)):
        state = d.rng.bit_generator.state
        y = d(x)
        assert np.array_equal(y, x) and d.last_mask is None
        assert d.rng.bit_generator.state == state      # generator did not advance
        assert np.array_equal(d.backward(x), x)


def test_replay_reproduces_a_forward_without_drawing():
    x = rnd(4, 4)
    a = Dropout(0.5, rng=np.random.default_rng(1))
    ya = a(x)
    b = Dropout(0.5, rng=np.random.default_rng(99))    # another seed: only the replay can match
    state = b.rng.bit_generator.state
    b.replay(a.last_mask)
    assert np.array_equal(b(x), ya)
    assert b.rng.bit_generator.state == state
    assert not np.array_equal(b(x), ya)                # the replay was used once


def test_replay_validation():
    d = Dropout(0.5)
    with pytest.raises(TypeError, match="mask"):
        d.replay(np.ones((2, 2)))                      # not bool
    d.replay(np.ones((2, 3), dtype=bool))
    with pytest.raises(ValueError, match=r"mask .*expected shape \(2, 2\)"):
        d(np.zeros((2, 2)))
    e = Dropout(0.5).eval()
    e.replay(np.ones((2, 2), dtype=bool))
    with pytest.raises(RuntimeError, match="eval"):
        e(np.zeros((2, 2)))


def test_collect_and_replay_for_a_model():
    x = rnd(3, 5)
    m = TwoDrops(seed=0)
    y = m(x)
    masks = collect_dropout_masks(m)
    assert set(masks) == {"drop1", "inner.drop"}
    other = TwoDrops(seed=10)
    replay_dropout_masks(other, masks)
    assert np.array_equal(other(x), y)
    m.eval()
    m(x)
    assert collect_dropout_masks(m) == {}


def test_replay_unknown_name_changes_nothing():
    m = TwoDrops()
    good = np.ones((2, 2), dtype=bool)
    with pytest.raises(ValueError, match=r"unknown Dropout module names \['nope'\].*drop1"):
        replay_dropout_masks(m, {"drop1": good, "nope": good})
    with pytest.raises(TypeError, match="inner.drop"):
        replay_dropout_masks(m, {"drop1": good, "inner.drop": np.ones((2, 2))})
    assert m.drop1._replay is None                     # nothing queued by the failed calls


def test_bad_arguments():
    for p in (1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="p: expected a float in"):
            Dropout(p)
    with pytest.raises(TypeError, match="p: expected"):
        Dropout(True)
    with pytest.raises(TypeError, match="rng"):
        Dropout(0.1, rng=3)
    with pytest.raises(ValueError, match="mask: expected shape"):
        dropout_forward(np.zeros((2, 2)), 0.5, np.ones((2, 3), dtype=bool))
    with pytest.raises(RuntimeError, match="Dropout.backward called before forward"):
        Dropout(0.1).backward(np.zeros(2))
    d = Dropout(0.5)
    d(np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError, match="dout"):
        d.backward(np.zeros((2, 2), np.float64))
    with pytest.raises(ValueError, match="x: expected finite"):
        d(np.array([np.inf]))
