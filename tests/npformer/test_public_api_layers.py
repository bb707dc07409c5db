"""Every layer module, through the public API, against an independent gradient check.

The check itself (fourth-order finite differences, the error measure, the bound) is described in
tests/npformer/public_api_check.py."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from tests.npformer.public_api_check import (
    DROPS,
    assert_close,
    call1,
    cfg,
    fd_errors,
    jitter,
    mha_call,
    mha_grads,
    module_check,
    rand,
    seed_dropouts,
)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 4), (5, 4)])
def test_linear(bias, shape):
    rng = np.random.default_rng(10)
    m = jitter(nf.Linear(4, 3, bias=bias, dtype="float64", rng=np.random.default_rng(0)))
    assert [n for n, _ in m.named_parameters()] == (["weight", "bias"] if bias else ["weight"])
    assert m.weight.data.shape == (3, 4)                               # torch layout (out, in)
    x = rand(rng, *shape)
    assert np.allclose(m(x), x @ m.weight.data.T + (m.bias.data if bias else 0), rtol=0, atol=1e-14)
    assert_close(module_check(m, call1, {"x": x}))


def test_linear_accumulates_over_two_backwards():
    rng = np.random.default_rng(11)
    m = nf.Linear(3, 2, dtype="float64")
    x1, x2 = rand(rng, 4, 3), rand(rng, 4, 3)
    g1, g2 = rand(rng, 4, 2), rand(rng, 4, 2)
    m(x1), m.backward(g1)
    m(x2), m.backward(g2)
    assert np.allclose(m.weight.grad, g1.T @ x1 + g2.T @ x2, rtol=0, atol=1e-13)
    m.zero_grad()
    assert np.all(m.weight.grad == 0) and np.all(m.bias.grad == 0)


def test_embedding_module():
    m = jitter(nf.Embedding(7, 4, padding_idx=2, scale=1.7, dtype="float64",
                            rng=np.random.default_rng(0)))
    ids = np.array([[1, 2, 6], [2, 5, 1]])
    m.zero_grad()
    out = m(ids)
    assert np.array_equal(out, m.weight.data[ids] * 1.7)
    g = np.random.default_rng(12).standard_normal(out.shape)
    assert m.backward(g) is None
    assert np.all(m.weight.grad[2] == 0)
    W = m.weight.data

    def f():
        return float(np.sum(m(ids) * g))

    errs = fd_errors(f, {"weight": W}, {"weight": m.weight.grad.copy()},
                     exclude={"weight": range(8, 12)})                 # row 2 by design
    assert_close(errs)


@pytest.mark.parametrize("kind", ["sinusoidal", "learned"])
@pytest.mark.parametrize("offset", [0, 2])
def test_positional(kind, offset):
    rng = np.random.default_rng(13)
    if kind == "sinusoidal":
        m = nf.SinusoidalPositionalEncoding(6, max_len=9, dtype="float64")
        pos, i = np.arange(9)[:, None], np.arange(0, 6, 2)[None, :]
        ref = np.zeros((9, 6))
        ref[:, 0::2] = np.sin(pos / 10000 ** (i / 6))
        ref[:, 1::2] = np.cos(pos / 10000 ** (i / 6))
        assert np.allclose(m.pe, ref, rtol=0, atol=1e-12)
        assert np.allclose(nf.sinusoidal_table(9, 6, "float64"), ref, rtol=0, atol=1e-12)
    else:
        m = nf.LearnedPositionalEncoding(6, max_len=9, dtype="float64", rng=np.random.default_rng(0))
    x = rand(rng, 2, 4, 6)
    errs = module_check(m, lambda mod, x: mod(x, offset=offset), {"x": x})
    assert_close(errs)
    if kind == "learned":
        unused = np.r_[0:offset, offset + 4:9]
        assert np.all(m.weight.grad[unused] == 0)


def test_dropout_module_with_replayed_mask():
    m = nf.Dropout(0.4, rng=np.random.default_rng(3))
    x = rand(np.random.default_rng(14), 3, 5, 2)
    y = m(x)
    assert m.last_mask is not None and m.last_mask.dtype == bool
    assert np.array_equal(y, np.where(m.last_mask, x / 0.6, 0))
    assert_close(module_check(m, call1, {"x": x}))
    m.eval()
    assert m(x) is x or np.array_equal(m(x), x)


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh"])
def test_activation_module(name):
    x = rand(np.random.default_rng(15), 3, 4) * 2
    x = np.where(np.abs(x) < 0.05, -0.7, x)
    assert_close(module_check(nf.Activation(name), call1, {"x": x}))


def test_layernorm_module():
    m = jitter(nf.LayerNorm(5, eps=1e-5, dtype="float64"))
    x = rand(np.random.default_rng(16), 2, 3, 5) * 3 + 2
    y = m(x)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert np.allclose(y, ref * m.weight.data + m.bias.data, rtol=0, atol=1e-12)
    assert_close(module_check(m, call1, {"x": x}))



@pytest.mark.parametrize("case", ["self_padding", "self_causal", "cross_fully_masked",
                                  "cross_dropout", "no_bias"])
def test_multi_head_attention(case):
    rng = np.random.default_rng(17)
    B, Tq, Tk, D = 2, 3, 4, 8
    drop = 0.3 if case == "cross_dropout" else 0.0
    m = jitter(nf.MultiHeadAttention(D, 2, dropout=drop, bias=case != "no_bias", dtype="float64",
                                     rng=np.random.default_rng(0)))
    mask = None
    if case.startswith("self") or case == "no_bias":
        Tk = Tq
    if case == "self_padding":
        mask = nf.padding_mask(np.array([[5, 6, 0], [1, 2, 3]]), 0)         # (B, 1, 1, T)
    elif case == "self_causal":
        mask = nf.causal_mask(Tq)                                          # (1, 1, T, T)
    elif case == "cross_fully_masked":
        mask = np.ones((B, 1, Tq, Tk), bool)
        mask[0, 0, 1, :] = False                                           # a fully masked row
        mask[1, 0, :, 3] = False
    elif case == "cross_dropout":
        mask = nf.causal_mask(Tq, Tk)
    inputs = dict(query=rand(rng, B, Tq, D), key=rand(rng, B, Tk, D), value=rand(rng, B, Tk, D))
    errs = module_check(m, lambda mod, **kw: mha_call(mod, mask=mask, **kw), inputs,
                        combine=mha_grads)
    assert_close(errs)
    w = m.attn_weights
    assert w.shape == (B, 2, Tq, Tk) and np.isfinite(w).all()
    if case == "cross_fully_masked":
        assert np.all(w[0, :, 1] == 0)
    if "bias" in dict(m.k_proj.named_parameters()):                       # zero in theory
        assert np.max(np.abs(m.k_proj.bias.grad)) < 1e-12 * max(1.0, np.abs(m.v_proj.bias.grad).max())


def test_multi_head_self_attention_one_tensor():
    """query is key is value: the true gradient of x is the sum of the three."""
    m = jitter(nf.MultiHeadAttention(6, 3, dtype="float64", rng=np.random.default_rng(1)))
    x = rand(np.random.default_rng(18), 2, 4, 6)
    errs = module_check(m, lambda mod, x: mod(x, x, x, nf.causal_mask(4)), {"x": x},
                        combine=lambda gr: {"x": gr[0] + gr[1] + gr[2]})
    assert_close(errs)


@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_tanh"])
def test_feed_forward(act):
    m = jitter(nf.PositionwiseFeedForward(6, 10, activation=act, dropout=0.25, dtype="float64",
                                          rng=np.random.default_rng(2)))
    m.dropout.rng = np.random.default_rng(4)
    x = rand(np.random.default_rng(19), 2, 3, 6)
    errs = module_check(m, call1, {"x": x})
    assert_close(errs)
    assert m.dropout.last_mask is not None and not m.dropout.last_mask.all()


LAYOUTS = {
    "paper": dict(),
    "paper_dropout": dict(DROPS),
    "pre_gelu_final": dict(norm_first=True, activation="gelu", final_norm=True, **DROPS),
    "pre_tanh_nobias": dict(norm_first=True, activation="gelu_tanh", bias=False),
}



# every layout as a single layer; the two stacks (two layers, final norm or not) with dropout active
LAYER_CASES = [(layout, False) for layout in LAYOUTS] + [("paper_dropout", True),
                                                         ("pre_gelu_final", True)]


@pytest.mark.parametrize("layout, stack", LAYER_CASES)
def test_encoder(layout, stack):
    c = cfg(**LAYOUTS[layout])
    m = (nf.Encoder if stack else nf.EncoderLayer)(c, rng=np.random.default_rng(3))
    jitter(m)
    seed_dropouts(m, 5)
    x = rand(np.random.default_rng(20), 2, 4, 8)
    mask = nf.padding_mask(np.array([[3, 4, 0, 0], [0, 0, 0, 0]]), 0)   # batch 1: every key masked
    errs = module_check(m, lambda mod, x: mod(x, mask), {"x": x}, limit=4)
    assert_close(errs)


@pytest.mark.parametrize("layout, stack", LAYER_CASES)
@pytest.mark.parametrize("cross", [True, False])
def test_decoder(layout, stack, cross):
    c = cfg(**LAYOUTS[layout])
    cls = nf.Decoder if stack else nf.DecoderLayer
    m = cls(c, cross_attention=cross, rng=np.random.default_rng(4))
    jitter(m)
    seed_dropouts(m, 6)
    rng = np.random.default_rng(21)
    B, T, S = 2, 3, 5
    self_mask = nf.causal_mask(T) & nf.padding_mask(np.array([[1, 1, 0], [1, 1, 1]]), 0)
    inputs = {"x": rand(rng, B, T, 8)}
    if cross:
        inputs["memory"] = rand(rng, B, S, 8)
        memory_mask = nf.padding_mask(np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]]), 0)  # empty
    else:
        memory_mask = None

    def call(mod, x, memory=None):
        return mod(x, memory, self_mask, memory_mask)

    def combine(gr):
        dx, dmem = gr
        out = {"x": dx}
        if cross:
            out["memory"] = dmem
        else:
            assert dmem is None
        return out

    assert_close(module_check(m, call, inputs, combine=combine, limit=4))


def test_make_positional_follows_the_config():
    c = cfg(positional="learned")
    assert isinstance(nf.make_positional(c, rng=np.random.default_rng(0)),
                      nf.LearnedPositionalEncoding)
    pe = nf.make_positional(cfg())
    assert isinstance(pe, nf.SinusoidalPositionalEncoding) and pe.pe.shape == (7, 8)
    assert_close(module_check(pe, call1, {"x": rand(np.random.default_rng(32), 2, 7, 8)}))
