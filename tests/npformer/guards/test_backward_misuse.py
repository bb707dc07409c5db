"""Backward misused: before forward, with the wrong gradient, twice after one forward, after an
incremental forward or a failed one; nothing half-changed afterwards."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from tests.npformer.bad_input_helpers import IDS, SRC, TGT, cfg, expect, transformer


def modules_and_inputs():
    """(name, fresh module, forward call, output) for one module of each kind."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8))
    mem = rng.standard_normal((2, 4, 8))
    return [
        ("Linear", lambda: nf.Linear(8, 5, dtype="float64"), lambda m: m(x)),
        ("Embedding", lambda: nf.Embedding(13, 8, dtype="float64"), lambda m: m(SRC)),
        ("SinusoidalPositionalEncoding",
         lambda: nf.SinusoidalPositionalEncoding(8, 6, dtype="float64"), lambda m: m(x)),
        ("LearnedPositionalEncoding", lambda: nf.LearnedPositionalEncoding(8, 6, dtype="float64"),
         lambda m: m(x)),
        ("Dropout", lambda: nf.Dropout(0.5), lambda m: m(x)),
        ("Activation", lambda: nf.Activation("gelu"), lambda m: m(x)),
        ("LayerNorm", lambda: nf.LayerNorm(8, dtype="float64"), lambda m: m(x)),
        ("MultiHeadAttention", lambda: nf.MultiHeadAttention(8, 2, dtype="float64"),
         lambda m: m(x, mem, mem)),
        ("PositionwiseFeedForward", lambda: nf.PositionwiseFeedForward(8, 12, dtype="float64"),
         lambda m: m(x)),
        ("EncoderLayer", lambda: nf.EncoderLayer(cfg()), lambda m: m(x)),
        ("Encoder", lambda: nf.Encoder(cfg()), lambda m: m(x)),
        ("DecoderLayer", lambda: nf.DecoderLayer(cfg()), lambda m: m(x, mem)),
        ("Decoder", lambda: nf.Decoder(cfg()), lambda m: m(x, mem)),
        ("Transformer", transformer, lambda m: m(SRC, TGT)),
        ("EncoderClassifier", lambda: nf.EncoderClassifier(cfg(), seed=0), lambda m: m(SRC)),
        ("CausalLM", lambda: nf.CausalLM(cfg(), seed=0), lambda m: m(IDS)),
        ("CrossEntropyLoss", nf.CrossEntropyLoss, lambda m: m(np.zeros((3, 4)), np.array([0, 1, 2]))),
    ]


CASES = modules_and_inputs()


@pytest.mark.parametrize("name, build, run", CASES, ids=[c[0] for c in CASES])
def test_backward_before_forward(name, build, run):
    m = build()
    out = run(build())                                          # an output of the right shape
    msg = expect(RuntimeError, lambda: m.backward(np.zeros_like(out)), "before forward")
    assert name in msg


@pytest.mark.parametrize("name, build, run", CASES, ids=[c[0] for c in CASES])
def test_backward_with_wrong_gradient_changes_nothing(name, build, run):
    m = build()
    out = run(m)
    wrong_shape = np.zeros(out.shape + (1,)) if out.ndim else np.zeros(2)
    expect(ValueError, lambda: m.backward(wrong_shape), "expected shape", str(out.shape),
           str(wrong_shape.shape))
    expect(TypeError, lambda: m.backward(np.zeros(out.shape, np.float32)), "float64", "float32")
    expect(TypeError, lambda: m.backward(np.zeros(out.shape).tolist() if out.ndim else "1"),
           "got")
    for _, p in m.named_parameters():                           # nothing accumulated
        assert not p.grad.any()
    # the cache survived: a right backward still works and equals a fresh module's
    g = np.random.default_rng(1).standard_normal(out.shape)
    m2 = build()
    run(m2)
    r1, r2 = m.backward(g), m2.backward(g)
    for (n, p), (_, p2) in zip(m.named_parameters(), m2.named_parameters()):
        assert np.array_equal(p.grad, p2.grad), n
    flat1 = r1 if isinstance(r1, (tuple, dict)) else (r1,)
    flat2 = r2 if isinstance(r2, (tuple, dict)) else (r2,)
    if isinstance(r1, dict):
        flat1, flat2 = list(r1.values()), list(r2.values())
    for a, b in zip(flat1, flat2):
        assert (a is None and b is None) or np.array_equal(a, b)


def test_backward_after_incremental_forward_is_refused():
    lm = nf.CausalLM(cfg(), seed=0)
    caches = [{} for _ in range(1)]
    out = lm(IDS[:, :2], caches=caches)
    expect(RuntimeError, lambda: lm.backward(np.zeros_like(out)), "before forward")
    m = transformer()
    memory = m.encode(SRC)
    logits = m.decode(TGT, memory)
    expect(RuntimeError, lambda: m.backward(np.zeros_like(logits)), "before forward")


BAD_FORWARDS = {
    "Transformer": (lambda: nf.Transformer(cfg(dropout=0.3, attention_dropout=0.2), seed=2),
                    lambda m: m(SRC, TGT),
                    [lambda m: m(SRC + 20, TGT), lambda m: m(SRC, TGT, tgt_mask=np.ones((3, 3), bool)),
                     lambda m: m(np.ones((2, 9), int), TGT), lambda m: m(SRC, TGT.astype(float))]),
    "CausalLM": (lambda: nf.CausalLM(cfg(dropout=0.3, activation_dropout=0.2), seed=2),
                 lambda m: m(IDS),
                 [lambda m: m(IDS - 1), lambda m: m(IDS, mask=np.ones((2, 2, 4, 3), bool)),
                  lambda m: m(np.ones((1, 7), int))]),
    "EncoderClassifier": (lambda: nf.EncoderClassifier(cfg(dropout=0.3), seed=2),
                          lambda m: m(SRC),
                          [lambda m: m(SRC * 10), lambda m: m(SRC, np.ones((5,), bool))]),
    "MultiHeadAttention": (lambda: nf.MultiHeadAttention(8, 2, dropout=0.4, dtype="float64"),
                           lambda m: m(np.ones((2, 3, 8)), np.ones((2, 4, 8)), np.ones((2, 4, 8))),
                           [lambda m: m(np.ones((2, 3, 8)), np.ones((2, 4, 8)), np.ones((2, 5, 8))),
                            lambda m: m(np.ones((2, 3, 8)), np.ones((2, 4, 8), np.float32),
                                        np.ones((2, 4, 8))),
                            lambda m: m(np.full((2, 3, 8), np.nan), np.ones((2, 4, 8)),
                                        np.ones((2, 4, 8)))]),
}


@pytest.mark.parametrize("name", BAD_FORWARDS)
def test_failed_forward_keeps_the_previous_cache_and_generator(name):
    build, good, bads = BAD_FORWARDS[name]
    ref, m = build(), build()
    out_ref = good(ref)
    out = good(m)
    for bad in bads:
        with pytest.raises((ValueError, TypeError)):
            bad(m)
    g = np.random.default_rng(3).standard_normal(out.shape)
    r_ref, r = ref.backward(g), m.backward(g)          # backward of the last GOOD forward
    for (n, p), (_, q) in zip(ref.named_parameters(), m.named_parameters()):
        assert np.array_equal(p.grad, q.grad), n
    if isinstance(r, dict):
        assert all(np.array_equal(r[k], r_ref[k]) for k in r)
    # the dropout generator did not advance: the next forward draws what the reference draws
    assert np.array_equal(good(m), good(ref))
    assert np.array_equal(out, out_ref)


def test_forward_that_fails_inside_leaves_no_stale_cache_for_backward():
    """After a forward that passed the argument checks but failed inside (here a float32 overflow
    found by a later layer), backward must refuse rather than mix the old and the new caches."""
    lm = nf.CausalLM(cfg(dtype="float32"), seed=0)
    lm(IDS)                                                       # a good forward: cache present
    lm.tgt_embed.weight.data[7] = 3e38
    with np.errstate(over="ignore", invalid="ignore"):
        expect(ValueError, lambda: lm(np.array([[7, 1, 2]])), "finite", "NaN/inf")
    with pytest.raises(RuntimeError, match="backward called before forward"):
        lm.backward(np.zeros((2, 4, 13), np.float32))


def test_second_backward_after_one_forward_raises():
    from npformer.layers.linear import Linear
    from npformer.models.config import TransformerConfig
    from npformer.models.transformer import Transformer
    rng = np.random.default_rng(0)
    lin = Linear(4, 3, dtype="float64", rng=rng)
    x = rng.standard_normal((2, 4))
    g = rng.standard_normal((2, 3))
    lin(x)
    lin.backward(g)
    once = lin.weight.grad.copy()
    with pytest.raises(RuntimeError, match="Linear.backward called a second time after one forward"):
        lin.backward(g)
    assert np.array_equal(lin.weight.grad, once)                  # nothing was added
    lin(x)
    lin.backward(g)                                                # a new forward: fine again
    assert np.allclose(lin.weight.grad, 2 * once)
    m = Transformer(TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=1,
                                      num_decoder_layers=1, vocab_size=7, max_len=5,
                                      dtype="float64"))
    src, tgt = np.array([[3, 4, 5]]), np.array([[1, 4]])
    out = m(src, tgt)
    m.backward(rng.standard_normal(out.shape))
    grads = {n: p.grad.copy() for n, p in m.named_parameters()}
    with pytest.raises(RuntimeError, match="Transformer.backward called a second time"):
        m.backward(rng.standard_normal(out.shape))
    assert all(np.array_equal(p.grad, grads[n]) for n, p in m.named_parameters())
