"""Bad input through the public API: the exception type, a message that names the argument and shows
what was expected and what came, and nothing half-changed afterwards.

Behaviour with non-finite numbers, dtypes and fully masked rows is written down in docs/NUMERICS.md;
the tests at the end of this file hold the code to that page.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import npformer as nf


def cfg(**changes):
    base = dict(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=1, num_decoder_layers=1,
                max_len=6, vocab_size=13, pad_id=0, num_classes=3, dropout=0.0, dtype="float64")
    base.update(changes)
    return nf.TransformerConfig(**base)


def expect(exc, fn, *needles, vs=True):
    """fn() raises `exc` (or a subclass) whose message holds every needle (the argument's name and
    the values that show what was wrong), and, with vs, both an "expected ..." (or "needs ...",
    "takes no ...") and a "got ..." part. vs=False is for errors that list names instead (missing / unexpected keys,
    unknown fields): the listed names are the needles, and they are the expected-vs-got difference.
    """
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    for n in needles:
        assert n in msg, f"{n!r} not in message: {msg!r}"
    if vs and "before forward" not in msg:
        assert any(w in msg for w in ("expected", "needs", "takes no")) and "got" in msg, \
            f"no expected-vs-got in: {msg!r}"
    return msg


SRC = np.array([[1, 2, 3], [4, 5, 0]])
TGT = np.array([[1, 2], [3, 4]])
IDS = np.array([[1, 2, 3, 4], [5, 6, 0, 0]])


def transformer():
    return nf.Transformer(cfg(), seed=1)


# ==================================================================================================
# wrong rank / shape
# ==================================================================================================
def test_wrong_rank_and_shape_of_float_inputs():
    lin = nf.Linear(4, 3, dtype="float64")
    expect(ValueError, lambda: lin(np.zeros((2, 5))), "x", "4", "(2, 5)")
    expect(ValueError, lambda: lin(np.zeros(())), "x")
    ln = nf.LayerNorm(4, dtype="float64")
    expect(ValueError, lambda: ln(np.zeros((2, 5))), "x", "4", "(2, 5)")
    mha = nf.MultiHeadAttention(8, 2, dtype="float64")
    q, kv = np.zeros((2, 3, 8)), np.zeros((2, 4, 8))
    expect(ValueError, lambda: mha(q[0], kv, kv), "query", "3 dimensions", "(3, 8)")
    expect(ValueError, lambda: mha(q, kv[:1], kv[:1]), "key", "(2, Tk, 8)", "(1, 4, 8)")
    expect(ValueError, lambda: mha(q, kv, kv[:, :3]), "value", "(2, 4, 8)", "(2, 3, 8)")
    expect(ValueError, lambda: mha(np.zeros((2, 3, 6)), kv, kv), "query", "8", "(2, 3, 6)")
    ffn = nf.PositionwiseFeedForward(8, 12, dtype="float64")
    expect(ValueError, lambda: ffn(np.zeros((2, 3, 7))), "x", "8", "(2, 3, 7)")
    pe = nf.SinusoidalPositionalEncoding(8, max_len=5, dtype="float64")
    expect(ValueError, lambda: pe(np.zeros((3, 8))), "x", "(3, 8)")
    enc = nf.EncoderLayer(cfg())
    expect(ValueError, lambda: enc(np.zeros((2, 3, 6))), "x", "8", "(2, 3, 6)")
    dec = nf.DecoderLayer(cfg())
    expect(ValueError, lambda: dec(np.zeros((2, 3, 8)), np.zeros((1, 4, 8))), "memory", "(1, 4, 8)")
    expect(ValueError, lambda: dec(np.zeros((2, 3, 8)), None), "memory", "None")
    dec_lm = nf.Decoder(cfg(), cross_attention=False)
    expect(ValueError, lambda: dec_lm(np.zeros((2, 3, 8)), np.zeros((2, 4, 8))), "memory")
    expect(ValueError, lambda: nf.sdpa_forward(np.zeros((2, 3, 4)), np.zeros((2, 3, 4)),
                                               np.zeros((2, 3, 4))), "q", "4 dimensions", "(2, 3, 4)")
    expect(ValueError, lambda: nf.sdpa_forward(np.zeros((1, 1, 2, 4)), np.zeros((1, 1, 2, 3)),
                                               np.zeros((1, 1, 2, 4))), "k", "(1, 1, 2, 3)")
    ce = nf.CrossEntropyLoss()
    expect(ValueError, lambda: ce(np.zeros((3, 4)), np.array([1, 2])), "targets", "(3,)", "(2,)")


def test_wrong_rank_and_shape_of_token_ids():
    m = transformer()
    expect(ValueError, lambda: m(SRC[0], TGT), "src", "2 dimensions", "(3,)")
    expect(ValueError, lambda: m(SRC[None], TGT), "src", "2 dimensions", "(1, 2, 3)")
    expect(ValueError, lambda: m(SRC, TGT[:1]), "tgt", "batch size 2", "(1, 2)")
    expect(ValueError, lambda: m(np.zeros((2, 0), int), TGT), "src", "(2, 0)")
    lm = nf.CausalLM(cfg(), seed=0)
    expect(ValueError, lambda: lm(IDS[0]), "ids", "2 dimensions", "(4,)")
    clf = nf.EncoderClassifier(cfg(), seed=0)
    expect(ValueError, lambda: clf(SRC[None]), "src", "2 dimensions", "(1, 2, 3)")


# ==================================================================================================
# token ids: negative, too large, not integers
# ==================================================================================================
@pytest.mark.parametrize("model, call", [
    ("transformer", lambda m, ids: m(ids, TGT)),
    ("transformer_tgt", lambda m, ids: m(SRC, ids)),
    ("causal_lm", lambda m, ids: m(ids)),
    ("classifier", lambda m, ids: m(ids)),
    ("embedding", lambda m, ids: m(ids)),
])
def test_token_ids_out_of_range_or_not_integers(model, call):
    build = {"transformer": transformer, "transformer_tgt": transformer,
             "causal_lm": lambda: nf.CausalLM(cfg(), seed=0),
             "classifier": lambda: nf.EncoderClassifier(cfg(), seed=0),
             "embedding": lambda: nf.Embedding(13, 4)}[model]
    m = build()
    name = {"transformer": "src", "transformer_tgt": "tgt", "causal_lm": "ids",
            "classifier": "src", "embedding": "ids"}[model]
    base = SRC if model != "transformer_tgt" else TGT
    low, high = base - 3, base + 11
    expect(ValueError, lambda: call(m, low), name, "[0, 13)", f"[{low.min()}, {low.max()}]")
    expect(ValueError, lambda: call(m, high), name, "[0, 13)", f"[{high.min()}, {high.max()}]")
    expect(TypeError, lambda: call(m, base.astype(np.float64)), name, "integer", "float64")
    expect(TypeError, lambda: call(m, base > 1), name, "integer", "bool")


# ==================================================================================================
# masks that do not broadcast (or are not masks)
# ==================================================================================================
def test_masks_that_do_not_broadcast():
    m = transformer()
    expect(ValueError, lambda: m(SRC, TGT, src_mask=np.ones((2, 1, 1, 4), bool)), "src_mask",
           "(2, 2, 3, 3)", "(2, 1, 1, 4)")
    expect(ValueError, lambda: m(SRC, TGT, tgt_mask=np.ones((3, 3), bool)), "tgt_mask",
           "(2, 2, 2, 2)", "(3, 3)")
    expect(ValueError, lambda: m(SRC, TGT, tgt_mask=np.ones((3, 1, 2, 2), bool)), "tgt_mask",
           "(3, 1, 2, 2)")
    expect(TypeError, lambda: m(SRC, TGT, src_mask=np.ones((2, 1, 1, 3))), "src_mask", "bool",
           "float64")
    expect(ValueError, lambda: m(SRC, TGT, src_mask=np.full((2, 1, 1, 3), 2)), "src_mask", "0/1",
           "[2, 2]")
    mha = nf.MultiHeadAttention(8, 2, dtype="float64")
    q, kv = np.zeros((2, 3, 8)), np.zeros((2, 4, 8))
    expect(ValueError, lambda: mha(q, kv, kv, np.ones((2, 1, 3, 3), bool)), "mask", "(2, 2, 3, 4)",
           "(2, 1, 3, 3)")
    expect(ValueError, lambda: nf.sdpa_forward(np.zeros((1, 1, 2, 4)), np.zeros((1, 1, 3, 4)),
                                               np.zeros((1, 1, 3, 4)), mask=np.ones((2, 2), bool)),
           "mask", "(1, 1, 2, 3)", "(2, 2)")
    lm = nf.CausalLM(cfg(), seed=0)
    expect(ValueError, lambda: lm(IDS, mask=np.ones((1, 1, 4, 5), bool)), "mask", "(1, 1, 4, 5)")
    enc = nf.Encoder(cfg())
    expect(ValueError, lambda: enc(np.zeros((2, 3, 8)), np.ones((2, 1, 1, 2), bool)), "mask",
           "(2, 1, 1, 2)")
    expect(ValueError, lambda: nf.combine_masks(np.ones((2, 3), bool), np.ones((4, 3), bool)),
           "masks", "(2, 3)", "(4, 3)")


# ==================================================================================================
# sequences longer than max_len
# ==================================================================================================
def test_sequences_longer_than_max_len():
    m = transformer()
    long = np.ones((2, 7), int)
    expect(ValueError, lambda: m(long, TGT), "src", "max_len=6", "7")
    expect(ValueError, lambda: m(SRC, long), "tgt", "max_len=6", "7")
    expect(ValueError, lambda: nf.CausalLM(cfg(), seed=0)(long), "ids", "max_len=6", "7")
    expect(ValueError, lambda: nf.EncoderClassifier(cfg(), seed=0)(long), "src", "max_len=6", "7")
    for pe in (nf.SinusoidalPositionalEncoding(8, max_len=5, dtype="float64"),
               nf.LearnedPositionalEncoding(8, max_len=5, dtype="float64")):
        expect(ValueError, lambda: pe(np.zeros((1, 6, 8))), "max_len=5", "6")
        expect(ValueError, lambda: pe(np.zeros((1, 3, 8)), offset=3), "offset", "max_len=5", "6")


# ==================================================================================================
# configuration: d_model % num_heads, unknown names
# ==================================================================================================
@pytest.mark.parametrize("changes, field, needle", [
    (dict(d_model=10, num_heads=4), "d_model", "num_heads=4"),
    (dict(activation="swish"), "activation", "'swish'"),
    (dict(activation="GELU"), "activation", "'GELU'"),
    (dict(norm_first="pre"), "norm_first", "'pre'"),          # placement is a bool: True = pre-norm
    (dict(positional="rotary"), "positional", "'rotary'"),
    (dict(pooling="max"), "pooling", "'max'"),
    (dict(dtype="float16"), "dtype", "'float16'"),
    (dict(dropout=1.0), "dropout", "1.0"),
    (dict(pad_id=13), "pad_id", "13"),
    (dict(num_heads=0), "num_heads", "0"),
])
def test_bad_config(changes, field, needle):
    expect(ValueError, lambda: cfg(**changes), f"TransformerConfig.{field}", needle)


def test_bad_component_arguments():
    expect(ValueError, lambda: nf.MultiHeadAttention(10, 4), "d_model", "num_heads=4", "10")
    expect(ValueError, lambda: nf.Activation("swish"), "activation", "relu", "'swish'")
    expect(ValueError, lambda: nf.PositionwiseFeedForward(8, 12, activation="tanh"), "activation",
           "'tanh'")
    expect(ValueError, lambda: nf.Linear(2, 3, dtype="float16"), "dtype", "'float16'")
    expect(ValueError, lambda: nf.LayerNorm(4, dtype="int32"), "dtype", "'int32'")
    expect(ValueError, lambda: nf.Dropout(1.0), "p", "[0, 1)", "1.0")
    expect(TypeError, lambda: nf.Transformer({"d_model": 8}), "config", "TransformerConfig", "dict")
    expect(ValueError, lambda: nf.CausalLM(cfg(), seed=-1), "seed", "-1")
    expect(ValueError, lambda: nf.TransformerConfig.from_dict({"d_modle": 8}), "d_modle",
           "expected a subset", vs=False)


# ==================================================================================================
# backward before forward, backward with the wrong gradient
# ==================================================================================================
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


# ==================================================================================================
# a failed forward leaves the previous forward's cache (and the dropout generator) alone
# ==================================================================================================
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


# ==================================================================================================
# load_state_dict: missing, unexpected, mis-shaped keys; nothing partially loaded
# ==================================================================================================
@pytest.mark.parametrize("model", ["Transformer", "CausalLM", "EncoderClassifier", "Linear"])
def test_load_state_dict_rejects_and_loads_nothing(model):
    build = {"Transformer": lambda s: nf.Transformer(cfg(), seed=s),
             "CausalLM": lambda s: nf.CausalLM(cfg(tie_embeddings=True), seed=s),
             "EncoderClassifier": lambda s: nf.EncoderClassifier(cfg(), seed=s),
             "Linear": lambda s: nf.Linear(3, 2, dtype="float64", rng=np.random.default_rng(s))}
    m = build[model](0)
    before = m.state_dict()
    other = build[model](1).state_dict()                   # different numbers, same keys
    keys = list(other)
    first, last = keys[0], keys[-1]

    def assert_unchanged():
        now = m.state_dict()
        assert list(now) == list(before)
        assert all(np.array_equal(now[k], before[k]) for k in now)

    missing = {k: v for k, v in other.items() if k != last}
    expect(ValueError, lambda: m.load_state_dict(missing), "missing", last, "nothing was loaded",
           vs=False)
    assert_unchanged()
    unexpected = dict(other, **{"encoder.layers.9.norm1.weight": np.zeros(8)})
    expect(ValueError, lambda: m.load_state_dict(unexpected), "unexpected",
           "encoder.layers.9.norm1.weight", vs=False)
    assert_unchanged()
    bad_shape = dict(other)
    bad_shape[last] = np.zeros(other[last].shape + (2,))
    expect(ValueError, lambda: m.load_state_dict(bad_shape), last, str(other[last].shape),
           str(bad_shape[last].shape))
    assert_unchanged()
    bad_kind = dict(other)
    bad_kind[first] = np.full(other[first].shape, "x")
    expect(ValueError, lambda: m.load_state_dict(bad_kind), first, "real (float or integer)", "<U1")
    assert_unchanged()
    # the good one loads everything
    m.load_state_dict(other)
    now = m.state_dict()
    assert all(np.array_equal(now[k], other[k]) for k in other)


def test_load_state_dict_non_strict_loads_the_present_keys():
    m = nf.Linear(3, 2, dtype="float64")
    w = np.arange(6.0).reshape(2, 3)
    m.load_state_dict({"weight": w}, strict=False)
    assert np.array_equal(m.weight.data, w) and not m.bias.data.any()


def test_load_state_dict_keeps_the_model_dtype():
    """Values are cast to each parameter's dtype (as torch's copy_ does); documented in NUMERICS."""
    m = nf.Linear(3, 2, dtype="float32")
    sd = {"weight": np.full((2, 3), 1 / 3), "bias": np.array([1, 2])}      # float64 and int64
    m.load_state_dict(sd)
    assert m.weight.data.dtype == np.float32 and m.bias.data.dtype == np.float32
    assert m.weight.data[0, 0] == np.float32(1 / 3)


def test_replay_with_unknown_names_queues_nothing():
    m = nf.CausalLM(cfg(dropout=0.5), seed=3)
    ref = nf.CausalLM(cfg(dropout=0.5), seed=3)
    expect(ValueError, lambda: nf.replay_dropout_masks(m, {"tgt_dropout": np.ones((2, 4, 8), bool),
                                                           "nope": np.ones(2, bool)}),
           "masks", "nope", "expected names", vs=False)
    assert np.array_equal(m(IDS), ref(IDS))                # nothing queued, generator untouched


def test_optimizer_step_with_one_bad_gradient_updates_nothing():
    lin = nf.Linear(3, 2, dtype="float64")
    lin(np.ones((1, 3)))
    lin.backward(np.ones((1, 2)))
    lin.bias.grad = np.zeros(2, np.float32)                 # a foreign gradient
    before = lin.state_dict()
    for opt in (nf.SGD(lin.named_parameters(), lr=0.1), nf.AdamW(lin.named_parameters())):
        expect(ValueError, opt.step, "bias", "float64", "float32")
        assert all(np.array_equal(lin.state_dict()[k], before[k]) for k in before)


# ==================================================================================================
# mixed dtypes
# ==================================================================================================
def test_mixed_dtypes_are_refused_not_converted():
    lin64 = nf.Linear(4, 3, dtype="float64")
    expect(TypeError, lambda: lin64(np.zeros((2, 4), np.float32)), "x", "float64", "float32")
    lin32 = nf.Linear(4, 3)
    expect(TypeError, lambda: lin32(np.zeros((2, 4))), "x", "float32", "float64")
    expect(TypeError, lambda: lin32(np.zeros((2, 4), int)), "x", "float", "int64")
    expect(TypeError, lambda: lin32(np.zeros((2, 4), np.float16)), "x", "float16")
    mha = nf.MultiHeadAttention(8, 2, dtype="float64")
    x = np.zeros((1, 2, 8))
    expect(TypeError, lambda: mha(x, x.astype(np.float32), x), "key", "float64", "float32")
    expect(TypeError, lambda: nf.sdpa_forward(np.zeros((1, 1, 2, 4)),
                                              np.zeros((1, 1, 2, 4), np.float32),
                                              np.zeros((1, 1, 2, 4))), "k", "float64", "float32")
    t = transformer()
    expect(TypeError, lambda: t.decode(TGT, np.zeros((2, 3, 8), np.float32)), "memory", "float64",
           "float32")
    dec = nf.DecoderLayer(cfg())
    expect(TypeError, lambda: dec(np.zeros((2, 3, 8)), np.zeros((2, 4, 8), np.float32)), "memory",
           "float32")
    enc32 = nf.EncoderLayer(cfg(dtype="float32"))
    expect(TypeError, lambda: enc32(np.zeros((2, 3, 8))), "x", "float32", "float64")
    out = lin64(np.zeros((2, 4)))
    expect(TypeError, lambda: lin64.backward(out.astype(np.float32)), "dout", "float64", "float32")
    expect(TypeError, lambda: nf.gradcheck(lin32, np.zeros((2, 4), np.float32)), "float64")


def test_integer_ids_of_any_width_are_accepted():
    m = nf.CausalLM(cfg(), seed=0)
    ref = m(IDS)
    for dt in (np.int8, np.int32, np.uint16, np.int64):
        assert np.array_equal(m(IDS.astype(dt)), ref)


# ==================================================================================================
# non-finite numbers: what docs/NUMERICS.md promises
# ==================================================================================================
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_float_inputs_are_refused_by_every_module(bad):
    x = np.ones((2, 3, 8))
    x[1, 2, 5] = bad
    mem = np.ones((2, 4, 8))
    mods = [(nf.Linear(8, 4, dtype="float64"), (x,)), (nf.LayerNorm(8, dtype="float64"), (x,)),
            (nf.Activation("relu"), (x,)), (nf.Dropout(0.1), (x,)),
            (nf.SinusoidalPositionalEncoding(8, 6, dtype="float64"), (x,)),
            (nf.MultiHeadAttention(8, 2, dtype="float64"), (x, mem, mem)),
            (nf.MultiHeadAttention(8, 2, dtype="float64"), (mem[:, :3], x, x)),
            (nf.PositionwiseFeedForward(8, 12, dtype="float64"), (x,)),
            (nf.EncoderLayer(cfg()), (x,)), (nf.Decoder(cfg()), (x, mem)),
            (nf.Decoder(cfg()), (mem[:, :3], x)), (nf.CrossEntropyLoss(), (x, np.zeros((2, 3), int)))]
    for m, args in mods:
        expect(ValueError, lambda: m(*args), "finite", "1 NaN/inf")
    expect(ValueError, lambda: nf.sdpa_forward(x[:, None], x[:, None], x[:, None]), "q", "finite")


def test_non_finite_parameters_surface_as_an_error_or_in_the_loss():
    """A NaN/inf parameter: the next module's input check raises; in the last layer (no module
    after it) the logits carry it, and CrossEntropyLoss refuses non-finite logits."""
    lm = nf.CausalLM(cfg(), seed=0)
    lm.decoder.layers[0].norm1.weight.data[0] = np.nan
    expect(ValueError, lambda: lm(IDS), "finite", "NaN/inf")
    lm = nf.CausalLM(cfg(), seed=0)
    lm.output_proj.bias.data[3] = np.inf
    logits = lm(IDS)
    assert not np.isfinite(logits).all()                          # detectable: np.isfinite
    expect(ValueError, lambda: nf.CrossEntropyLoss()(logits, IDS), "logits", "finite")


def test_float32_overflow_inside_a_model_raises_a_clear_error():
    lm = nf.CausalLM(cfg(dtype="float32"), seed=0)
    lm.tgt_embed.weight.data[7] = 3e38                            # finite, overflows once scaled
    with np.errstate(over="ignore", invalid="ignore"):
        expect(ValueError, lambda: lm(np.array([[7, 1, 2]])), "finite", "NaN/inf")


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


def test_constructor_arguments_are_named_as_the_caller_wrote_them():
    expect(ValueError, lambda: nf.PositionwiseFeedForward(0, 12), "d_model", "positive int", "0")
    expect(ValueError, lambda: nf.MultiHeadAttention(8, 2, dropout=1.5), "dropout", "[0, 1)", "1.5")
    expect(ValueError, lambda: nf.PositionwiseFeedForward(8, 12, dropout=-0.1), "dropout", "-0.1")
    expect(TypeError, lambda: nf.Linear(3, 2, rng=5), "rng", "Generator", "int")
    expect(TypeError, lambda: nf.Linear(3, 2).load_state_dict([1, 2]), "state", "mapping", "list")


def test_refused_replayed_mask_is_not_kept_for_the_next_forward():
    drop = nf.Dropout(0.5, rng=np.random.default_rng(0))
    x = np.ones((2, 3))
    drop.replay(np.ones((5, 5), bool))                            # wrong shape for x
    expect(ValueError, lambda: drop(x), "mask", "(2, 3)")
    y = drop(x)                                                   # draws a fresh mask again
    assert y.shape == (2, 3) and drop.last_mask.shape == (2, 3)


def test_a_layers_non_finite_upstream_gradient_is_detectable_after_backward():
    """A layer's backward does not scan the upstream gradient for NaN/inf (documented; a model's
    backward refuses one: tests/npformer/guards/test_upstream_gradient_finite.py): the parameter
    gradients carry it and clip_grad_norm returns a non-finite norm, the check to make before
    optimizer.step()."""
    lin = nf.Linear(8, 5, dtype="float64")
    out = lin(np.random.default_rng(0).standard_normal((2, 3, 8)))
    g = np.random.default_rng(1).standard_normal(out.shape)
    g[0, 0, 0] = np.nan
    lin.backward(g)
    assert not all(np.isfinite(p.grad).all() for p in lin.parameters())
    assert not np.isfinite(nf.clip_grad_norm(lin.named_parameters(), 1.0))


def test_safe_softmax_and_fully_masked_rows_never_nan():
    mha = nf.MultiHeadAttention(8, 2, dtype="float64")
    x = np.random.default_rng(0).standard_normal((2, 3, 8))
    out = mha(x, x, x, np.zeros((1, 1, 1, 3), bool))             # every row fully masked
    assert np.isfinite(out).all() and not mha.attn_weights.any()
    assert np.allclose(out, mha.out_proj.bias.data)               # zero heads -> the bias
    dq, dk, dv = mha.backward(np.ones_like(out))
    assert not dq.any() and not dk.any() and not dv.any()
    y, _ = nf.softmax_forward(np.array([[-np.inf, -np.inf], [1e308, -1e308]]))
    assert np.array_equal(y, [[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"x: expected finite values or -inf .* 1 NaN/\+inf"):
        nf.softmax_forward(np.array([np.inf, 0.0]))              # +inf would give NaN: refused


def test_documented_behaviour_is_in_numerics_page():
    import pathlib
    page = pathlib.Path(__file__).resolve().parents[2] / "docs" / "NUMERICS.md"
    text = page.read_text()
    for topic in ("float32", "float64", "NaN", "fully masked", "-inf", "bit-identical",
                  "clip_grad_norm", "load_state_dict"):
        assert re.search(re.escape(topic), text), topic


# -- a second backward after one forward raises (as torch), at every level ------------------------------
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


def test_ragged_id_lists_are_named_not_numpy_internals():
    """`model([[1, 2], [3]])` used to raise NumPy's "inhomogeneous shape" message."""
    import npformer as nf
    from npformer.models.config import gpt2_config
    m = nf.CausalLM(gpt2_config(vocab_size=20, max_len=16, d_model=8, num_heads=2, d_ff=16,
                                num_decoder_layers=1), seed=0)
    with pytest.raises(ValueError, match=r"^ids: expected a rectangular \(batch, seq\) array .*"
                                         r"rows of different lengths"):
        m([[1, 2], [3]])
    with pytest.raises(ValueError, match=r"^prompts: expected a rectangular"):
        nf.greedy_decode(m, [[1, 2], [3]])


@pytest.mark.parametrize("kw, error, message", [
    ({"label_smoothing": float("nan")}, ValueError, r"label_smoothing: expected a float in \[0, 1\], got nan"),
    ({"label_smoothing": 1.5}, ValueError, r"label_smoothing: expected a float in \[0, 1\], got 1.5"),
    ({"ignore_index": 0.5}, TypeError, "ignore_index: expected an int, got float"),
])
def test_functional_cross_entropy_checks_its_options_as_the_module_does(kw, error, message):
    logits, targets = np.zeros((2, 3), np.float32), np.array([0, 1])
    with pytest.raises(error, match=message):
        nf.cross_entropy_forward(logits, targets, **kw)
    with pytest.raises(error, match=message):
        nf.CrossEntropyLoss(**kw)


def test_functional_cross_entropy_names_logits_that_are_not_an_array():
    with pytest.raises(TypeError, match="logits: expected a numpy array, got list"):
        nf.cross_entropy_forward([[0.0, 1.0]], np.array([0]))
