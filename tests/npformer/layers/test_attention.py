"""Scaled dot-product attention and MultiHeadAttention: finite differences, an independent loop
reference, safe softmax on fully masked rows, dtypes and bad input."""
import math

import numpy as np
import pytest

from npformer import sdpa_backward, sdpa_forward  # the checked public pair
from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.attention import MultiHeadAttention, attention_weights_backward, attention_weights_forward

TOL = 1e-6  # the project's bound for float64 finite differences


def rand(rng, *shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def reference_sdpa(q, k, v, keep=None, drop=None, p=0.0):
    """Attention written the slow way: a loop over (batch, head, query), math-module softmax."""
    B, H, Tq, dk = q.shape
    Tk = k.shape[2]
    keep = np.ones((B, H, Tq, Tk), bool) if keep is None else np.broadcast_to(keep, (B, H, Tq, Tk))
    out = np.zeros((B, H, Tq, v.shape[3]))
    weights = np.zeros((B, H, Tq, Tk))
    for b in range(B):
        for h in range(H):
            for i in range(Tq):
                allowed = [j for j in range(Tk) if keep[b, h, i, j]]
                if not allowed:
                    continue
                s = {j: float(np.dot(q[b, h, i], k[b, h, j])) / math.sqrt(dk) for j in allowed}
                m = max(s.values())
                z = sum(math.exp(x - m) for x in s.values())
                for j in allowed:
                    weights[b, h, i, j] = math.exp(s[j] - m) / z
                    w = weights[b, h, i, j]
                    if drop is not None:
                        w = w * drop[b, h, i, j] / (1 - p)
                    out[b, h, i] += w * v[b, h, j]
    return out, weights


def padding_keep(lengths, Tk):
    """(B, 1, 1, Tk) keep-mask: key j of row b is kept when j < lengths[b]."""
    return (np.arange(Tk)[None, :] < np.asarray(lengths)[:, None])[:, None, None, :]


def causal_keep(T):
    return np.tril(np.ones((T, T), bool))[None, None]


# ------------------------------------------------------------------------------------------------
# functional sdpa
# ------------------------------------------------------------------------------------------------
def masks_for_case(case, B, H, Tq, Tk, rng):
    if case == "none":
        return None
    if case == "padding":
        return padding_keep([Tk, Tk - 2][:B], Tk)
    if case == "causal":
        return causal_keep(Tq)
    if case == "fully_masked_rows":       # query rows 0 of batch 0 (all heads) and 2 of head 1 empty
        keep = rng.random((B, H, Tq, Tk)) < 0.6
        keep[0, :, 0, :] = False
        keep[:, 1, 2, :] = False
        keep[1, 0, 1, :] = True
        return keep
    if case == "int_mask":                 # 0/1 integers are accepted as a keep-mask
        return padding_keep([Tk - 1, 2][:B], Tk).astype(np.int64)
    raise AssertionError(case)


@pytest.mark.parametrize("case,Tq,Tk", [("none", 3, 5), ("padding", 4, 5), ("causal", 4, 4),
                                        ("fully_masked_rows", 3, 4), ("int_mask", 2, 5)])
def test_sdpa_matches_loop_reference_and_gradcheck(case, Tq, Tk):
    rng = np.random.default_rng(1)
    B, H, dk, dv = 2, 2, 3, 4
    q, k, v = rand(rng, B, H, Tq, dk), rand(rng, B, H, Tk, dk), rand(rng, B, H, Tk, dv)
    mask = masks_for_case(case, B, H, Tq, Tk, rng)

    (out, weights), _ = sdpa_forward(q, k, v, mask)
    ref_out, ref_w = reference_sdpa(q, k, v, None if mask is None else mask != 0)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(weights, ref_w, rtol=1e-12, atol=1e-14)

    report = check_pair(sdpa_forward, sdpa_backward, [q, k, v], output_index=0, mask=mask, tol=TOL)
    report.raise_if_failed()


def test_sdpa_dropout_with_fixed_mask_matches_reference_and_gradcheck():
    rng = np.random.default_rng(2)
    B, H, Tq, Tk, dk = 2, 2, 3, 4, 3
    q, k, v = rand(rng, B, H, Tq, dk), rand(rng, B, H, Tk, dk), rand(rng, B, H, Tk, dk)
    keep = padding_keep([4, 2], Tk)
    drop = rng.random((B, H, Tq, Tk)) >= 0.4
    p = 0.4

    (out, weights), _ = sdpa_forward(q, k, v, keep, dropout_mask=drop, dropout_p=p)
    ref_out, ref_w = reference_sdpa(q, k, v, keep, drop, p)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(weights, ref_w, rtol=1e-12, atol=1e-14)   # weights before dropout

    check_pair(sdpa_forward, sdpa_backward, [q, k, v], output_index=0, mask=keep,
               dropout_mask=drop, dropout_p=p, tol=TOL).raise_if_failed()


def test_attention_weights_pair_gradcheck():
    rng = np.random.default_rng(3)
    q, k = rand(rng, 1, 2, 3, 4), rand(rng, 1, 2, 5, 4)
    keep = rng.random((1, 2, 3, 5)) < 0.7
    keep[0, 0, 1] = False
    check_pair(attention_weights_forward, attention_weights_backward, [q, k], keep=keep,
               tol=TOL).raise_if_failed()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fully_masked_rows_are_exact_zeros_never_nan(dtype):
    rng = np.random.default_rng(4)
    B, H, Tq, Tk, dk = 2, 2, 3, 4, 4
    q, k, v = (rand(rng, B, H, T, dk, dtype=dtype) * 30 for T in (Tq, Tk, Tk))  # large logits too
    keep = np.ones((B, 1, Tq, Tk), bool)
    keep[1, 0, 2, :] = False                        # batch 1, query 2: nothing to attend to
    keep[0, 0, 0, 1:] = False                       # batch 0, query 0: a single key
    (out, weights), cache = sdpa_forward(q, k, v, keep)
    assert out.dtype == weights.dtype == dtype
    assert np.isfinite(out).all() and np.isfinite(weights).all()
    assert (weights[1, :, 2] == 0).all() and (out[1, :, 2] == 0).all()
    assert (weights[0, :, 0, 1:] == 0).all() and (weights[0, :, 0, 0] == 1).all()
    dout = rand(rng, B, H, Tq, dk, dtype=dtype)
    dq, dk_, dv = sdpa_backward(dout, cache)
    for g in (dq, dk_, dv):
        assert g.dtype == dtype and np.isfinite(g).all()
    assert (dq[1, :, 2] == 0).all()                 # the empty row passes no gradient to its query
    # the empty row contributes nothing to dk/dv: dropping it from dout changes nothing
    dout2 = dout.copy()
    dout2[1, :, 2] = 0
    _, dk2, dv2 = sdpa_backward(dout2, cache)
    np.testing.assert_array_equal(dk_, dk2)
    np.testing.assert_array_equal(dv, dv2)
    # rows that do have keys sum to one
    np.testing.assert_allclose(weights.sum(-1)[keep.any(-1).repeat(H, 1)], 1.0, rtol=1e-6)


def test_all_masked_everything_gives_zeros():
    rng = np.random.default_rng(5)
    q, k, v = rand(rng, 1, 1, 2, 2), rand(rng, 1, 1, 3, 2), rand(rng, 1, 1, 3, 2)
    (out, weights), cache = sdpa_forward(q, k, v, np.zeros((1, 1, 1, 3), bool))
    assert not out.any() and not weights.any()
    assert not any(g.any() for g in sdpa_backward(rand(rng, 1, 1, 2, 2), cache))


def test_sdpa_bad_input_names_the_argument():
    rng = np.random.default_rng(6)
    q, k, v = rand(rng, 1, 2, 3, 4), rand(rng, 1, 2, 5, 4), rand(rng, 1, 2, 5, 4)
    with pytest.raises(ValueError, match="mask"):
        sdpa_forward(q, k, v, np.ones((3, 3), bool))                    # (3, 3) vs (.., 3, 5)
    with pytest.raises(ValueError, match="k:"):
        sdpa_forward(q, rand(rng, 1, 2, 5, 3), v)
    with pytest.raises(ValueError, match="v:"):
        sdpa_forward(q, k, rand(rng, 1, 2, 4, 4))
    with pytest.raises(ValueError, match="q:"):
        sdpa_forward(q[0], k, v)
    with pytest.raises(TypeError, match="k:.*float64"):
        sdpa_forward(q, k.astype(np.float32), v)
    with pytest.raises(ValueError, match="mask"):
        sdpa_forward(q, k, v, dropout_mask=np.ones((1, 2, 3, 4), bool), dropout_p=0.1)
    (_, _), cache = sdpa_forward(q, k, v)
    with pytest.raises(ValueError, match="dout"):
        sdpa_backward(rand(rng, 1, 2, 5, 4), cache)


# ------------------------------------------------------------------------------------------------
# MultiHeadAttention
# ------------------------------------------------------------------------------------------------
def mha64(d_model=8, heads=2, dropout=0.0, bias=True, seed=0):
    m = MultiHeadAttention(d_model, heads, dropout=dropout, bias=bias, dtype="float64",
                           rng=np.random.default_rng(seed))
    for _, p in m.named_parameters():       # non-zero biases, so their gradients are exercised
        if p.data.ndim == 1:
            p.data[...] = np.random.default_rng(seed + 7).standard_normal(p.data.shape) * 0.1
    return m


def reference_mha(m, query, key, value, keep):
    """Projections and heads done by hand, one head at a time, via the loop reference."""
    def proj(lin, x):
        y = x @ lin.weight.data.T
        return y if lin.bias is None else y + lin.bias.data
    H, dk = m.num_heads, m.head_dim
    q, k, v = proj(m.q_proj, query), proj(m.k_proj, key), proj(m.v_proj, value)
    heads = []
    for h in range(H):
        sl = slice(h * dk, (h + 1) * dk)
        kh = None
        if keep is not None:
            kh = np.broadcast_to(keep, (q.shape[0], H) + keep.shape[2:])[:, h:h + 1]
        o, _ = reference_sdpa(q[:, None, :, sl], k[:, None, :, sl], v[:, None, :, sl], kh)
        heads.append(o[:, 0])
    return proj(m.out_proj, np.concatenate(heads, axis=-1))


def test_mha_self_attention_matches_reference_and_gradcheck():
    rng = np.random.default_rng(7)
    m = mha64()
    x = rand(rng, 2, 4, 8)
    keep = padding_keep([4, 3], 4) & causal_keep(4)         # (2, 1, 4, 4)
    out = m(x, x, x, mask=keep)
    np.testing.assert_allclose(out, reference_mha(m, x, x, x, keep), rtol=1e-11, atol=1e-12)
    assert m.attn_weights.shape == (2, 2, 4, 4)
    # gradcheck copies x three times: query, key and value each get (and are checked for) a grad
    gradcheck(m, x, x, x, mask=keep, tol=TOL).raise_if_failed()


def test_mha_cross_attention_tq_ne_tk_with_padding_and_empty_row():
    rng = np.random.default_rng(8)
    m = mha64(bias=True)
    query, memory = rand(rng, 2, 3, 8), rand(rng, 2, 5, 8)
    keep = np.broadcast_to(padding_keep([5, 2], 5), (2, 1, 3, 5)).copy()
    keep[1, 0, 1, :] = False                                # one fully masked query row
    out = m(query, memory, memory, mask=keep)
    np.testing.assert_allclose(out, reference_mha(m, query, memory, memory, keep), rtol=1e-11,
                               atol=1e-12)
    assert (m.attn_weights[1, :, 1] == 0).all()
    gradcheck(m, query, memory, memory, mask=keep, tol=TOL).raise_if_failed()


def test_mha_attention_dropout_active_gradcheck():
    rng = np.random.default_rng(9)
    m = mha64(dropout=0.3)
    m.train()
    query, memory = rand(rng, 2, 3, 8), rand(rng, 2, 4, 8)
    report = gradcheck(m, query, memory, memory, mask=padding_keep([4, 3], 4), tol=TOL)
    report.raise_if_failed()
    mask = m.attn_dropout.last_mask
    assert mask is not None and mask.shape == (2, 2, 3, 4) and not mask.all()


def test_mha_without_bias_gradcheck():
    rng = np.random.default_rng(10)
    m = mha64(bias=False)
    assert [n for n, _ in m.named_parameters()] == ["q_proj.weight", "k_proj.weight",
                                                    "v_proj.weight", "out_proj.weight"]
    x = rand(rng, 1, 3, 8)
    gradcheck(m, x, x, x, tol=TOL).raise_if_failed()


def test_mha_parameter_names_and_float32_stays_float32():
    m = MultiHeadAttention(8, 2, dropout=0.2, dtype="float32", rng=np.random.default_rng(0))
    m.train()
    assert [n for n, _ in m.named_parameters()] == [
        f"{p}_proj.{w}" for p in ("q", "k", "v", "out") for w in ("weight", "bias")]
    rng = np.random.default_rng(11)
    x, mem = rand(rng, 2, 3, 8, dtype=np.float32), rand(rng, 2, 4, 8, dtype=np.float32)
    out = m(x, mem, mem, mask=padding_keep([4, 1], 4))
    assert out.dtype == np.float32 and m.attn_weights.dtype == np.float32
    grads = m.backward(rand(rng, 2, 3, 8, dtype=np.float32))
    assert [g.dtype for g in grads] == [np.float32] * 3
    assert all(p.grad.dtype == np.float32 for p in m.parameters())


def test_mha_bad_input_names_the_argument():
    rng = np.random.default_rng(12)
    m = mha64()
    x = rand(rng, 2, 3, 8)
    with pytest.raises(ValueError, match="d_model"):
        MultiHeadAttention(10, 4)
    with pytest.raises(RuntimeError, match="backward called before forward"):
        m.backward(x)
    with pytest.raises(ValueError, match="query"):
        m(x[0], x, x)
    with pytest.raises(ValueError, match="query"):
        m(rand(rng, 2, 3, 6), x, x)
    with pytest.raises(ValueError, match="key"):
        m(x, rand(rng, 3, 3, 8), x)
    with pytest.raises(ValueError, match="value"):
        m(x, x, rand(rng, 2, 4, 8))
    with pytest.raises(TypeError, match="query.*float64"):
        m(x.astype(np.float32), x, x)
    with pytest.raises(ValueError, match="mask"):
        m(x, x, x, mask=np.ones((2, 1, 3, 4), bool))
    with pytest.raises(ValueError, match="query.*finite"):
        bad = x.copy()
        bad[0, 0, 0] = np.nan
        m(bad, x, x)
    m(x, x, x)
    with pytest.raises(ValueError, match="dout"):
        m.backward(rand(rng, 2, 4, 8))
    with pytest.raises(TypeError, match="dout"):
        m.backward(x.astype(np.float32))
    m(x, x, x, cache={})
    with pytest.raises(RuntimeError, match="incremental cache"):
        m.backward(x)
