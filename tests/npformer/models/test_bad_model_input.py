"""Bad input to the models: token ids of the wrong shape, range or type, masks that do not
broadcast, sequences past max_len, bad configurations, non-finite parameters and overflow
(docs/NUMERICS.md); the exception names the argument and shows what was expected and what came."""
from __future__ import annotations

import re

import numpy as np
import pytest

import npformer as nf
from tests.npformer.bad_input_helpers import IDS, SRC, TGT, cfg, expect, transformer


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


def test_integer_ids_of_any_width_are_accepted():
    m = nf.CausalLM(cfg(), seed=0)
    ref = m(IDS)
    for dt in (np.int8, np.int32, np.uint16, np.int64):
        assert np.array_equal(m(IDS.astype(dt)), ref)


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


def test_documented_behaviour_is_in_numerics_page():
    import pathlib
    page = pathlib.Path(__file__).resolve().parents[3] / "docs" / "NUMERICS.md"
    text = page.read_text()
    for topic in ("float32", "float64", "NaN", "fully masked", "-inf", "bit-identical",
                  "clip_grad_norm", "load_state_dict"):
        assert re.search(re.escape(topic), text), topic
