"""Positional encodings: the paper's sinusoids, learned table, offsets, max_len errors."""
import math

import numpy as np
import pytest

from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.positional import (
    LearnedPositionalEncoding,
    SinusoidalPositionalEncoding,
    make_positional,
    positional_backward,
    positional_forward,
    sinusoidal_table,
)
from npformer.models.config import TransformerConfig

TOL = 1e-6


@pytest.mark.parametrize("d_model", [1, 6, 7])
def test_sinusoidal_table_matches_the_formula(d_model):
    L = 12
    pe = sinusoidal_table(L, d_model, "float64")
    expect = np.zeros((L, d_model))
    for pos in range(L):
        for col in range(d_model):
            i = col // 2                               # column pair (2i, 2i+1)
            angle = pos / 10000 ** (2 * i / d_model)
            expect[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    assert pe.shape == (L, d_model)
    assert np.allclose(pe, expect, rtol=0, atol=1e-15)


def test_sinusoidal_table_dtype():
    assert sinusoidal_table(4, 6).dtype == np.float32
    assert np.array_equal(sinusoidal_table(4, 6, "float32"),
                          sinusoidal_table(4, 6, "float64").astype(np.float32))


@pytest.mark.parametrize("offset", [0, 3])
def test_sinusoidal_forward_adds_rows_from_offset(offset):
    m = SinusoidalPositionalEncoding(6, max_len=8, dtype="float64")
    x = np.random.default_rng(0).standard_normal((2, 5, 6))
    y = m(x, offset=offset) if offset else m(x)
    assert np.array_equal(y, x + m.pe[offset:offset + 5])
    assert list(m.named_parameters()) == []


def test_sinusoidal_gradcheck():
    m = SinusoidalPositionalEncoding(6, max_len=8, dtype="float64")
    rep = gradcheck(m, np.random.default_rng(0).standard_normal((2, 3, 6)), offset=4)
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_learned_gradcheck_with_offset():
    m = LearnedPositionalEncoding(5, max_len=8, dtype="float64", rng=np.random.default_rng(1))
    rep = gradcheck(m, np.random.default_rng(0).standard_normal((2, 3, 5)), offset=2)
    assert set(rep.errors) == {"input:x", "weight"}
    assert rep.passed and rep.max_error < TOL, str(rep)
    assert np.all(m.weight.grad[:2] == 0) and np.all(m.weight.grad[5:] == 0)   # unused rows


def test_pair_gradients():
    rng = np.random.default_rng(3)
    rep = check_pair(positional_forward, positional_backward,
                     (rng.standard_normal((2, 3, 4)), rng.standard_normal((7, 4)), 2))
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_learned_init():
    m = LearnedPositionalEncoding(16, max_len=64, rng=np.random.default_rng(0))
    assert m.weight.shape == (64, 16) and m.weight.dtype == np.float32
    assert 0.018 < m.weight.data.std() < 0.022        # N(0, 0.02), 1024 draws


def test_float32_stays_float32():
    for m in (SinusoidalPositionalEncoding(4, 5), LearnedPositionalEncoding(4, 5)):
        y = m(np.zeros((1, 2, 4), np.float32))
        assert y.dtype == np.float32
        assert m.backward(np.ones((1, 2, 4), np.float32)).dtype == np.float32


def test_make_positional():
    c = TransformerConfig(d_model=8, num_heads=2, max_len=10, dtype="float64")
    s = make_positional(c)
    assert isinstance(s, SinusoidalPositionalEncoding) and s.pe.shape == (10, 8)
    assert s.pe.dtype == np.float64
    l = make_positional(c.replace(positional="learned"), np.random.default_rng(0))
    assert isinstance(l, LearnedPositionalEncoding) and l.weight.shape == (10, 8)


def test_bad_input():
    m = SinusoidalPositionalEncoding(4, max_len=5)
    with pytest.raises(ValueError, match="max_len=5"):
        m(np.zeros((1, 6, 4), np.float32))
    with pytest.raises(ValueError, match="offset"):
        m(np.zeros((1, 3, 4), np.float32), offset=3)
    with pytest.raises(ValueError, match="offset"):
        m(np.zeros((1, 3, 4), np.float32), offset=-1)
    with pytest.raises(ValueError, match=r"x: expected shape \(\*, \*, 4\)"):
        m(np.zeros((1, 3, 5), np.float32))
    with pytest.raises(ValueError, match=r"x: expected 3 dimensions"):
        m(np.zeros((3, 4), np.float32))
    with pytest.raises(TypeError, match="x: expected dtype float32"):
        m(np.zeros((1, 3, 4), np.float64))
    with pytest.raises(RuntimeError, match="backward called before forward"):
        LearnedPositionalEncoding(4, 5).backward(np.zeros((1, 3, 4), np.float32))
    with pytest.raises(ValueError, match="max_len"):
        LearnedPositionalEncoding(4, 0)
