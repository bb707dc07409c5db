"""Every model (Transformer, EncoderClassifier, CausalLM) and the loss module, through the public API,
against an independent gradient check of parameters and first-layer input gradients.

The check itself (fourth-order finite differences, the error measure, the bound) is described in
tests/npformer/public_api_check.py."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from tests.npformer.public_api_check import (
    DROPS,
    assert_close,
    cfg,
    fd_errors,
    jitter,
    model_check,
    rand,
)

SRC = np.array([[3, 4, 5, 6, 2], [7, 8, 9, 0, 0]])
SRC_ALL_PAD = np.array([[3, 4, 5, 6, 2], [0, 0, 0, 0, 0]])            # batch 1: fully masked rows
TGT = np.array([[1, 2, 3, 4], [5, 6, 0, 0]])

TRANSFORMERS = {
    "paper_dropout": (dict(DROPS), SRC, TGT, False),
    "pre_gelu_learned_tied_shared": (dict(norm_first=True, activation="gelu", positional="learned",
                                          final_norm=True, tie_embeddings=True,
                                          share_embeddings=True, output_bias=False,
                                          num_encoder_layers=1, num_decoder_layers=1, **DROPS),
                                     SRC, TGT, False),
    "tanh_vocabs_all_pad_src": (dict(activation="gelu_tanh", src_vocab_size=11, tgt_vocab_size=9,
                                     scale_embeddings=False, num_encoder_layers=1,
                                     num_decoder_layers=1), SRC_ALL_PAD, TGT, False),
    "no_pad_explicit_masks": (dict(pad_id=None, bias=False, num_encoder_layers=1,
                                   num_decoder_layers=1), SRC, TGT, True),
}


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transformer(name):
    changes, src, tgt, explicit = TRANSFORMERS[name]
    model = jitter(nf.Transformer(cfg(**changes), seed=3))
    if explicit:
        src_mask = np.array([True, False])[:, None, None, None] & np.ones((1, 1, 1, 5), bool)
        src_mask = src_mask.copy()
        src_mask[0, ..., 4] = False                                     # batch 1: all masked
        tgt_mask = nf.causal_mask(4)

        def call(m, src, tgt):
            return m(src, tgt, src_mask, tgt_mask)
    else:
        def call(m, src, tgt):
            return m(src, tgt)
    errs = model_check(model, call, {"src": src, "tgt": tgt},
                       input_keys={"src": ("encoder_input", "src"), "tgt": ("decoder_input", "tgt")})
    assert_close(errs)
    if model.config.tie_embeddings:
        assert model.output_proj.weight is model.tgt_embed.weight
    if model.config.share_embeddings:
        assert model.src_embed.weight is model.tgt_embed.weight


CLASSIFIERS = {
    "first_post_relu": dict(pooling="first"),
    "mean_pre_learned_dropout": dict(pooling="mean", norm_first=True, positional="learned",
                                     final_norm=True, activation="gelu", **DROPS),
}


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_encoder_classifier(name):
    model = jitter(nf.EncoderClassifier(cfg(**CLASSIFIERS[name]), seed=4))
    errs = model_check(model, lambda m, src: m(src), {"src": SRC},
                       input_keys={"src": ("encoder_input", "src")})
    assert_close(errs)


CAUSAL = {
    "gpt2_layout_dropout": dict(norm_first=True, activation="gelu_tanh", positional="learned",
                                final_norm=True, scale_embeddings=False, tie_embeddings=True,
                                pad_id=None, **DROPS),
    "paper_layout_padding": dict(num_decoder_layers=1),
    "tied_with_padding": dict(tie_embeddings=True, activation="gelu"),
}


@pytest.mark.parametrize("name", CAUSAL)
def test_causal_lm(name):
    model = jitter(nf.CausalLM(cfg(**CAUSAL[name]), seed=5))
    ids = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 0, 0]])
    if model.config.pad_id is None:
        ids = ids + 1
    errs = model_check(model, lambda m, ids: m(ids), {"ids": ids},
                       input_keys={"tgt": ("decoder_input", "ids")})
    assert_close(errs)


def test_causal_lm_tied_pad_row_without_pad_tokens():
    """With no pad token in the input, the tied pad row's gradient comes from the output projection
    only, and finite differences see exactly that: every entry of that row is checked."""
    model = jitter(nf.CausalLM(cfg(tie_embeddings=True, num_decoder_layers=1), seed=6))
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    model.zero_grad()
    out = model(ids)
    g = np.random.default_rng(8).standard_normal(out.shape)
    model.backward(g)
    W = model.tgt_embed.weight
    assert np.any(W.grad[0] != 0)

    def f():
        return float(np.sum(model(ids) * g))

    D = W.data.shape[1]
    errs = fd_errors(f, {"weight": W.data}, {"weight": W.grad.copy()},
                     exclude={"weight": range(D, W.data.size)})             # row 0 only
    assert_close(errs)


def test_cross_entropy_module():
    rng = np.random.default_rng(22)
    loss_fn = nf.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
    logits = rand(rng, 2, 3, 5)
    targets = np.array([[1, 0, 4], [2, 3, 0]])
    loss_fn.zero_grad()
    loss = loss_fn(logits, targets)
    g = float(rng.standard_normal())
    dlogits = loss_fn.backward(g)

    def f():
        return float(loss_fn(logits, targets)) * g

    assert f() == pytest.approx(float(loss) * g)
    assert_close(fd_errors(f, {"logits": logits}, {"logits": dlogits}))
    assert np.all(dlogits[0, 1] == 0) and np.all(dlogits[1, 2] == 0)   # ignored rows
