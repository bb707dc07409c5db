"""Transformer, EncoderClassifier, CausalLM: finite differences of every parameter (pad tokens, dropout
active with replayed masks, tying/sharing, both position kinds, both poolings, GPT-2 layout), the
first-layer input gradients, semantics of masks and pooling, determinism, dtypes and bad input."""
import numpy as np
import pytest

from npformer.checks.gradcheck import gradcheck
from npformer.layers.dropout import Dropout
from npformer.models.causal_lm import CausalLM
from npformer.models.classifier import EncoderClassifier
from npformer.models.transformer import Transformer
from tests.npformer.layer_helpers import TOL, jitter, tiny_config

# src (B=2, S=5) and tgt (B=2, T=4) with pad_id 0 at the ends (and one all-but-first-pad row)
SRC = np.array([[5, 3, 9, 2, 0],
                [7, 1, 0, 0, 0]])
TGT = np.array([[1, 4, 6, 0],
                [1, 10, 8, 2]])
PER_TENSOR = 16   # finite-difference a random 16 entries of each bigger tensor: keeps models fast


def seq2seq_config(**changes):
    base = dict(dropout=0.1, attention_dropout=0.1, activation_dropout=0.1)
    base.update(changes)
    return tiny_config(**base)


GPT2 = dict(norm_first=True, activation="gelu_tanh", positional="learned", final_norm=True,
            scale_embeddings=False, tie_embeddings=True)


# ------------------------------------------------------------------------------------------------
# finite differences, every parameter, dropout active
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("changes", [
    dict(),                                                                   # the paper's layout
    dict(tie_embeddings=True, positional="learned"),
    dict(share_embeddings=True, tie_embeddings=True, norm_first=True, final_norm=True),
    dict(src_vocab_size=13, tgt_vocab_size=11, num_encoder_layers=2, activation="gelu",
         output_bias=False, bias=False),
], ids=["paper", "tied-learned", "shared-tied-prenorm", "two-vocabs-nobias"])
def test_transformer_gradcheck(changes):
    m = jitter(Transformer(seq2seq_config(**changes), seed=1))
    m.train()
    report = gradcheck(m, SRC, TGT, tol=TOL, max_per_tensor=PER_TENSOR)
    report.raise_if_failed()
    assert any(d.last_mask is not None for _, d in m.named_modules() if isinstance(d, Dropout))


@pytest.mark.parametrize("pooling", ["first", "mean"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_classifier_gradcheck(pooling, norm_first):
    c = seq2seq_config(pooling=pooling, norm_first=norm_first, final_norm=norm_first,
                       num_encoder_layers=2)
    m = jitter(EncoderClassifier(c, seed=2))
    m.train()
    gradcheck(m, SRC, tol=TOL, max_per_tensor=PER_TENSOR).raise_if_failed()


@pytest.mark.parametrize("changes", [GPT2, dict()], ids=["gpt2", "paper-layout"])
def test_causal_lm_gradcheck(changes):
    m = jitter(CausalLM(seq2seq_config(num_decoder_layers=2, **changes), seed=3))
    m.train()
    gradcheck(m, TGT, tol=TOL, max_per_tensor=PER_TENSOR).raise_if_failed()


# ------------------------------------------------------------------------------------------------
# first-layer input gradients: the embedding gradient is their scatter-add (independent relation)
# ------------------------------------------------------------------------------------------------
def scatter_rows(ids, grads, vocab, pad_id):
    """sum of grads[b, t] into row ids[b, t], pad row left zero (a plain loop)."""
    out = np.zeros((vocab, grads.shape[-1]))
    for b in range(ids.shape[0]):
        for t in range(ids.shape[1]):
            if ids[b, t] != pad_id:
                out[ids[b, t]] += grads[b, t]
    return out


def test_input_gradients_match_embedding_gradients():
    c = tiny_config()                                      # sinusoidal, scaled, no dropout
    rng = np.random.default_rng(4)
    m = jitter(Transformer(c, seed=4))
    m.zero_grad()
    logits = m(SRC, TGT)
    grads = m.backward(rng.standard_normal(logits.shape))
    scale = np.sqrt(c.d_model)
    np.testing.assert_allclose(m.src_embed.weight.grad,
                               scale * scatter_rows(SRC, grads["encoder_input"], 11, 0),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(m.tgt_embed.weight.grad,
                               scale * scatter_rows(TGT, grads["decoder_input"], 11, 0),
                               rtol=1e-12, atol=1e-14)

    clf = jitter(EncoderClassifier(c.replace(pooling="mean"), seed=5))
    logits = clf(SRC)
    d = clf.backward(rng.standard_normal(logits.shape))["encoder_input"]
    np.testing.assert_allclose(clf.src_embed.weight.grad, scale * scatter_rows(SRC, d, 11, 0),
                               rtol=1e-12, atol=1e-14)

    lm = jitter(CausalLM(c.replace(scale_embeddings=False), seed=6))
    logits = lm(TGT)
    d = lm.backward(rng.standard_normal(logits.shape))["decoder_input"]
    np.testing.assert_allclose(lm.tgt_embed.weight.grad, scatter_rows(TGT, d, 11, 0),
                               rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------------------------------------
# tying and sharing: one Parameter whose gradient is the sum of both uses
# ------------------------------------------------------------------------------------------------
def test_tied_and_shared_gradients_sum_both_uses():
    c = tiny_config(tie_embeddings=True, share_embeddings=True, output_bias=False)
    tied = jitter(Transformer(c, seed=7))
    assert tied.output_proj.weight is tied.tgt_embed.weight is tied.src_embed.weight
    state = tied.state_dict()
    assert {"src_embed.weight", "tgt_embed.weight", "output_proj.weight"} <= set(state)
    names = [n for n, _ in tied.named_parameters()]
    assert "src_embed.weight" in names and "tgt_embed.weight" not in names
    assert "output_proj.weight" not in names

    free = Transformer(c.replace(tie_embeddings=False, share_embeddings=False), seed=8)
    free.load_state_dict(state)                            # same numbers, three separate Parameters
    g = np.random.default_rng(9).standard_normal((2, 4, 11))
    for m in (tied, free):
        m.zero_grad()
        m(SRC, TGT)
        m.backward(g)
    expected = (free.src_embed.weight.grad + free.tgt_embed.weight.grad
                + free.output_proj.weight.grad)
    np.testing.assert_allclose(tied.src_embed.weight.grad, expected, rtol=1e-12, atol=1e-14)
    assert tied.num_parameters() == free.num_parameters() - 2 * 11 * 8

    lm = CausalLM(c, seed=1)
    assert lm.output_proj.weight is lm.tgt_embed.weight


# ------------------------------------------------------------------------------------------------
# masks and pooling semantics
# ------------------------------------------------------------------------------------------------
def test_default_masks_equal_explicit_ones_and_padding_is_invisible():
    c = tiny_config(num_encoder_layers=2, num_decoder_layers=2)
    m = Transformer(c, seed=10).eval()
    src_keep = (SRC != 0)[:, None, None, :]
    tgt_keep = np.tril(np.ones((4, 4), bool))[None, None] & (TGT != 0)[:, None, None, :]
    np.testing.assert_array_equal(m(SRC, TGT), m(SRC, TGT, src_keep, tgt_keep))
    # more trailing source padding changes nothing for any target position
    longer = np.concatenate([SRC, np.zeros((2, 1), int)], axis=1)
    np.testing.assert_allclose(m(longer, TGT), m(SRC, TGT), rtol=1e-12, atol=1e-13)
    # the target is causal: changing the last target token leaves earlier positions unchanged
    tgt2 = TGT.copy()
    tgt2[:, -1] = 5
    a, b = m(SRC, TGT), m(SRC, tgt2)
    np.testing.assert_array_equal(a[:, :-1], b[:, :-1])
    assert not np.allclose(a[1, -1], b[1, -1])


@pytest.mark.parametrize("pooling", ["first", "mean"])
def test_classifier_pooling_ignores_padding(pooling):
    c = tiny_config(pooling=pooling, num_encoder_layers=2)
    m = EncoderClassifier(c, seed=11).eval()
    logits = m(SRC)
    padded = np.concatenate([SRC, np.zeros((2, 1), int)], axis=1)       # one more pad each
    np.testing.assert_allclose(m(padded), logits, rtol=1e-12, atol=1e-13)
    # row 1 alone, without its padding, gives the same logits
    np.testing.assert_allclose(m(SRC[1:, :2]), logits[1:], rtol=1e-12, atol=1e-13)


def test_classifier_mean_pooling_reference():
    c = tiny_config(pooling="mean")
    m = EncoderClassifier(c, seed=12).eval()
    logits = m(SRC)
    x = m.src_pos(m.src_embed(SRC))
    h = m.encoder(x, (SRC != 0)[:, None, None, :])
    pooled = np.stack([h[0, :4].mean(0), h[1, :2].mean(0)])
    ref = pooled @ m.classifier.weight.data.T + m.classifier.bias.data
    np.testing.assert_allclose(logits, ref, rtol=1e-12, atol=1e-13)


def test_causal_lm_is_causal_and_fully_padded_rows_stay_finite():
    m = CausalLM(tiny_config(**GPT2), seed=13).eval()
    ids = np.array([[3, 4, 5, 6], [0, 0, 7, 8]])        # row 1 starts with pads: empty query rows
    a = m(ids)
    assert np.isfinite(a).all()
    ids2 = ids.copy()
    ids2[:, 2:] = 9
    np.testing.assert_array_equal(m(ids2)[:, :2], a[:, :2])
    grads = m.backward(np.random.default_rng(0).standard_normal(a.shape))
    assert np.isfinite(grads["decoder_input"]).all()
    assert all(np.isfinite(p.grad).all() for p in m.parameters())


# ------------------------------------------------------------------------------------------------
# determinism, dropout generator, dtypes
# ------------------------------------------------------------------------------------------------
def run_model(cls, config, seed, *inputs):
    m = cls(config, seed=seed)
    m.train()
    out = m(*inputs)
    grads = m.backward(np.random.default_rng(99).standard_normal(out.shape).astype(out.dtype))
    return out, grads, {n: p.grad.copy() for n, p in m.named_parameters()}


@pytest.mark.parametrize("cls,inputs", [(Transformer, (SRC, TGT)), (EncoderClassifier, (SRC,)),
                                        (CausalLM, (TGT,))])
def test_same_seed_bit_identical_different_seed_differs(cls, inputs):
    c = seq2seq_config(dtype="float32")
    out1, g1, p1 = run_model(cls, c, 5, *inputs)
    out2, g2, p2 = run_model(cls, c, 5, *inputs)
    np.testing.assert_array_equal(out1, out2)
    for k in g1:
        np.testing.assert_array_equal(g1[k], g2[k])
    for k in p1:
        np.testing.assert_array_equal(p1[k], p2[k])
    out3, _, _ = run_model(cls, c, 6, *inputs)
    assert not np.array_equal(out1, out3)


def test_one_shared_dropout_generator_from_seed_plus_one():
    m = Transformer(seq2seq_config(), seed=21)
    drops = [d for _, d in m.named_modules() if isinstance(d, Dropout)]
    assert len(drops) == 2 + 2 * 2 + 1 * 3 + 2 * 1 + 1   # embeddings, enc layer, dec layer, attn, ffn
    assert all(d.rng is drops[0].rng for d in drops)
    expected = np.random.default_rng(22).random(5)
    np.testing.assert_array_equal(drops[0].rng.random(5), expected)
    m.eval()
    np.testing.assert_array_equal(m(SRC, TGT), m(SRC, TGT))   # eval: no dropout


@pytest.mark.parametrize("cls,inputs", [(Transformer, (SRC, TGT)), (EncoderClassifier, (SRC,)),
                                        (CausalLM, (TGT,))])
def test_float32_model_keeps_float32_everywhere(cls, inputs):
    m = cls(seq2seq_config(dtype="float32", positional="learned", tie_embeddings=True), seed=0)
    m.train()
    assert all(p.dtype == np.float32 for p in m.parameters())
    out = m(*inputs)
    assert out.dtype == np.float32
    grads = m.backward(np.random.default_rng(0).standard_normal(out.shape).astype(np.float32))
    assert all(g.dtype == np.float32 for g in grads.values())
    assert all(p.grad.dtype == np.float32 for p in m.parameters())
    for _, mod in m.named_modules():
        if getattr(mod, "attn_weights", None) is not None:
            assert mod.attn_weights.dtype == np.float32


# ------------------------------------------------------------------------------------------------
# bad input: clear errors naming the argument, nothing changed
# ------------------------------------------------------------------------------------------------
def test_transformer_bad_input():
    m = Transformer(tiny_config(), seed=0)
    with pytest.raises(RuntimeError, match="backward called before forward"):
        m.backward(np.zeros((2, 4, 11)))
    with pytest.raises(ValueError, match="src.*\\[0, 11\\)"):
        m(np.array([[1, 11]]), TGT[:1])
    with pytest.raises(ValueError, match="tgt.*\\[0, 11\\)"):
        m(SRC, np.array([[1, -1, 2, 3], [1, 2, 3, 4]]))
    with pytest.raises(TypeError, match="src"):
        m(SRC.astype(float), TGT)
    with pytest.raises(ValueError, match="src"):
        m(SRC[0], TGT)
    with pytest.raises(ValueError, match="src.*max_len=6"):
        m(np.ones((2, 7), int), TGT)
    with pytest.raises(ValueError, match="tgt.*batch size 2"):
        m(SRC, TGT[:1])
    with pytest.raises(ValueError, match="src_mask"):
        m(SRC, TGT, src_mask=np.ones((2, 1, 1, 4), bool))
    with pytest.raises(ValueError, match="src_mask"):
        m(SRC, TGT, src_mask=np.ones((2, 1, 5, 5), bool))    # fine for the encoder, not the memory
    with pytest.raises(ValueError, match="tgt_mask"):
        m(SRC, TGT, tgt_mask=np.ones((3, 1, 4, 4), bool))
    with pytest.raises(ValueError, match="src"):
        m(np.zeros((2, 0), int), TGT)
    logits = m(SRC, TGT)
    with pytest.raises(ValueError, match="dlogits"):
        m.backward(logits[:, :2])
    with pytest.raises(TypeError, match="dlogits"):
        m.backward(logits.astype(np.float32))
    m.encode(SRC)
    with pytest.raises(RuntimeError, match="backward called before forward"):
        m.backward(logits)
    with pytest.raises(ValueError, match="memory"):
        m.decode(TGT, np.zeros((2, 5, 6)))
    with pytest.raises(TypeError, match="memory.*float64"):
        m.decode(TGT, np.zeros((2, 5, 8), np.float32))
    with pytest.raises(TypeError, match="config"):
        Transformer({"d_model": 8})
    with pytest.raises(ValueError, match="seed"):
        Transformer(tiny_config(), seed=-1)
    with pytest.raises(ValueError, match="d_model"):
        tiny_config(d_model=10, num_heads=4)


def test_bad_input_leaves_the_model_unchanged():
    m = Transformer(tiny_config(), seed=0)
    g = np.random.default_rng(0).standard_normal((2, 4, 11))
    m(SRC, TGT)
    with pytest.raises(ValueError):
        m(SRC, TGT, tgt_mask=np.ones((2, 1, 3, 3), bool))
    m.backward(g)                                # still the first forward's graph
    first = {n: p.grad.copy() for n, p in m.named_parameters()}
    m.zero_grad()
    m(SRC, TGT)
    m.backward(g)
    for n, p in m.named_parameters():
        np.testing.assert_array_equal(p.grad, first[n])


def test_classifier_and_causal_lm_bad_input():
    clf = EncoderClassifier(tiny_config(), seed=0)
    with pytest.raises(RuntimeError, match="backward called before forward"):
        clf.backward(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="src"):
        clf(np.array([[1, 2, 11]]))
    with pytest.raises(ValueError, match="src_mask"):
        clf(SRC, src_mask=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="dlogits"):
        clf(SRC)
        clf.backward(np.zeros((2, 4)))
    lm = CausalLM(tiny_config(), seed=0)
    with pytest.raises(RuntimeError, match="backward called before forward"):
        lm.backward(np.zeros((2, 4, 11)))
    with pytest.raises(ValueError, match="ids.*max_len"):
        lm(np.ones((1, 7), int))
    with pytest.raises(ValueError, match="ids"):
        lm(np.ones((1, 2, 3), int))
    with pytest.raises(TypeError, match="ids"):
        lm(np.ones((1, 3), bool))
    with pytest.raises(ValueError, match="mask"):
        lm(TGT, mask=np.ones((1, 1, 4, 3), bool))
