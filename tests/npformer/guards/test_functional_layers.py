"""The public per-layer functional pairs (npformer.linear_forward, ...) refuse bad arguments with a
message naming the argument, and on good arguments return exactly what the plain layer functions do."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from npformer.layers import activations, embedding, layernorm, linear, softmax
from npformer.models import bert

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4))                        # (B, T, D) float64
W = RNG.standard_normal((5, 4))                           # (O, I)
B = RNG.standard_normal(5)
G, BETA = RNG.standard_normal(4), RNG.standard_normal(4)
E = RNG.standard_normal((7, 4))                           # (V, D)
IDS = np.array([[0, 3, 6], [2, 2, 1]])


def _same(a, b):
    """Two results (arrays or tuples/NamedTuples of arrays and scalars) equal bit for bit."""
    if isinstance(a, tuple):
        assert type(a) is type(b) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    else:
        assert a == b


# (public pair, plain pair, forward arguments, upstream gradient's shape)
PAIRS = [
    ("linear", linear.linear_forward, linear.linear_backward, (X, W, B), (2, 3, 5)),
    ("layernorm", layernorm.layernorm_forward, layernorm.layernorm_backward, (X, G, BETA, 1e-5),
     X.shape),
    ("embedding", embedding.embedding_forward, embedding.embedding_backward, (IDS, E, 2.0, 0),
     (2, 3, 4)),
    ("relu", activations.relu_forward, activations.relu_backward, (X,), X.shape),
    ("gelu", activations.gelu_forward, activations.gelu_backward, (X,), X.shape),
    ("gelu_tanh", activations.gelu_tanh_forward, activations.gelu_tanh_backward, (X,), X.shape),
    ("tanh", bert.tanh_forward, bert.tanh_backward, (X,), X.shape),
    ("softmax", softmax.softmax_forward, softmax.softmax_backward, (X, 1), X.shape),
    ("log_softmax", softmax.log_softmax_forward, softmax.log_softmax_backward, (X, -1), X.shape),
]


@pytest.mark.parametrize("name, plain_fw, plain_bw, args, dshape", PAIRS, ids=[p[0] for p in PAIRS])
def test_checked_pair_gives_the_plain_results(name, plain_fw, plain_bw, args, dshape):
    fw, bw = getattr(nf, f"{name}_forward"), getattr(nf, f"{name}_backward")
    out, cache = fw(*args)
    ref_out, ref_cache = plain_fw(*args)
    _same(out, ref_out)
    dout = np.random.default_rng(1).standard_normal(dshape)       # a random upstream gradient
    _same(bw(dout, cache), plain_bw(dout, ref_cache))


@pytest.mark.parametrize("name, args", [
    ("linear", (X, W, B)), ("layernorm", (X, G, BETA)), ("relu", (X,)), ("gelu", (X,)),
    ("gelu_tanh", (X,)), ("tanh", (X,)), ("softmax", (X,)), ("log_softmax", (X,))])
def test_backward_refuses_a_gradient_of_another_shape_or_dtype_and_a_foreign_cache(name, args):
    fw, bw = getattr(nf, f"{name}_forward"), getattr(nf, f"{name}_backward")
    out, cache = fw(*args)
    with pytest.raises(ValueError, match=r"dout: expected shape"):
        bw(np.zeros(out.shape[:-1] + (out.shape[-1] + 1,)), cache)
    if name != "relu":                                     # ReLU's cache keeps no dtype
        with pytest.raises(TypeError, match=r"dout: expected dtype float64"):
            bw(out.astype(np.float32), cache)
    with pytest.raises(TypeError, match=r"cache: expected the \w+Cache that \w+_forward returned"):
        bw(out, ("not", "a", "cache"))


def test_linear_refuses_widths_that_do_not_fit_and_mixed_dtypes():
    with pytest.raises(ValueError, match=r"W: expected shape \(out_features, 4\).* got \(5, 3\)"):
        nf.linear_forward(X, W[:, :3], B)
    with pytest.raises(ValueError, match=r"b: expected shape \(5\), got \(4,\)"):
        nf.linear_forward(X, W, B[:4])
    with pytest.raises(TypeError, match=r"W: expected dtype float64 \(x's dtype"):
        nf.linear_forward(X, W.astype(np.float32), B)
    with pytest.raises(TypeError, match=r"x: expected a numpy array, got list"):
        nf.linear_forward([[1.0, 2.0, 3.0, 4.0]], W, B)
    with pytest.raises(TypeError, match=r"x: expected dtype float32 or float64, got int64"):
        nf.linear_forward(np.ones((2, 4), dtype=np.int64), W, B)
    with pytest.raises(ValueError, match=r"x: expected finite values, got 1 NaN/inf"):
        nf.linear_forward(np.where(X == X.flat[0], np.nan, X), W, B)


def test_layernorm_refuses_a_non_positive_eps_and_wrong_widths():
    for eps in (-1e-5, 0.0, float("nan")):
        with pytest.raises(ValueError, match=r"eps: expected a positive finite number"):
            nf.layernorm_forward(X, G, BETA, eps)
    with pytest.raises(TypeError, match=r"eps: expected a real number, got str"):
        nf.layernorm_forward(X, G, BETA, "1e-5")
    with pytest.raises(ValueError, match=r"gamma: expected shape \(4\), got \(3,\)"):
        nf.layernorm_forward(X, G[:3], BETA)
    with pytest.raises(ValueError, match=r"beta: expected shape \(4\)"):
        nf.layernorm_forward(X, G, BETA[None])


def test_embedding_refuses_ids_out_of_range_and_a_padding_row_outside_the_table():
    with pytest.raises(ValueError, match=r"ids: expected token ids in \[0, 7\), got values in \[1, 7\]"):
        nf.embedding_forward(IDS + 1, E)
    with pytest.raises(TypeError, match=r"ids: expected integer token ids, got dtype float64"):
        nf.embedding_forward(IDS.astype(float), E)
    with pytest.raises(ValueError, match=r"padding_idx: expected an int in \[0, 7\)"):
        nf.embedding_forward(IDS, E, 1.0, 7)
    with pytest.raises(TypeError, match=r"padding_idx: expected an int or None, got bool"):
        nf.embedding_forward(IDS, E, 1.0, True)
    with pytest.raises(ValueError, match=r"scale: expected a finite number"):
        nf.embedding_forward(IDS, E, float("inf"))


def test_softmax_takes_minus_inf_and_refuses_nan_plus_inf_and_a_missing_axis():
    y, _ = nf.softmax_forward(np.array([[0.0, -np.inf], [-np.inf, -np.inf]]))
    assert np.array_equal(y, [[1.0, 0.0], [0.0, 0.0]])
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=r"x: expected finite values or -inf"):
            nf.log_softmax_forward(np.array([0.0, bad]))
    with pytest.raises(ValueError, match=r"axis: expected an int in \[-3, 3\).* got 3"):
        nf.softmax_forward(X, 3)
    with pytest.raises(TypeError, match=r"axis: expected an int, got float"):
        nf.softmax_forward(X, 1.0)


def test_dropout_and_loss_backward_refuse_what_their_forward_did_not_make():
    x = RNG.standard_normal((3, 4))
    keep = RNG.random((3, 4)) > 0.5
    _, cache = nf.dropout_forward(x, 0.5, keep)
    with pytest.raises(ValueError, match=r"dout: expected shape \(3, 4\)"):
        nf.dropout_backward(np.ones((4, 3)), cache)
    with pytest.raises(TypeError, match=r"cache: expected the DropoutCache"):
        nf.dropout_backward(x, None)
    loss, lcache = nf.cross_entropy_forward(x, np.array([0, 1, 3]))
    dlogits = nf.cross_entropy_backward(1.0, lcache)
    assert dlogits.shape == (3, 4) and np.isfinite(dlogits).all()
    with pytest.raises(ValueError, match=r"dout: expected a number or a 0-d float array"):
        nf.cross_entropy_backward(np.ones(3), lcache)
    with pytest.raises(ValueError, match=r"dout: expected a finite number, got nan"):
        nf.cross_entropy_backward(float("nan"), lcache)
