"""Planted bugs: each mutant replaces ONE piece of npformer's hand-written backward with a plausible
mistake (a sign, a transposed matrix, a missing mask, a wrong scale, a missing term, a wrong axis);
the suite's own Hypothesis tests must then fail with a ParityError whose first line names the
tensor that went wrong.

The suite test is re-run exactly as written (same strategies, same derandomized examples), with
shrinking off so it stops at the first failing example. `python -m pytest -s` prints the table
bug -> test -> first line of the message (used in docs/COVERAGE.md).
"""
from __future__ import annotations

import re
import sys
from typing import Callable, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import npformer.layers.activations
import npformer.layers.attention
import npformer.layers.dropout
import npformer.layers.embedding
import npformer.layers.layernorm
import npformer.layers.linear
import npformer.layers.loss
import npformer.layers.positional
import npformer.layers.softmax
import npformer.models.decoder
import npformer.models.encoder
from parity_tests import test_attention_parity as T_att
from parity_tests import test_embedding_positional_parity as T_emb
from parity_tests import test_layers_parity as T_lay
from parity_tests import test_linear_activation_parity as T_lin
from parity_tests import test_loss_masks_dropout_parity as T_loss
from parity_tests import test_model_parity as T_mod
from parity_tests import test_norm_softmax_parity as T_norm
from parity_tests.harness import ParityError

PLANTED = settings(max_examples=60, phases=[Phase.generate], derandomize=True, database=None,
                   deadline=None, print_blob=False, report_multiple_bugs=False,
                   suppress_health_check=list(HealthCheck))


def run_suite_test(test_fn) -> ParityError:
    """Run a suite @given test with its own strategies under PLANTED; return the ParityError."""
    h = test_fn.hypothesis
    fresh = given(**h._given_kwargs)(h.inner_test)
    fresh._hypothesis_internal_use_settings = PLANTED   # our copy only; the suite's is untouched
    try:
        fresh()
    except ParityError as e:
        return e
    pytest.fail(f"{test_fn.__name__} did not catch the planted bug in {PLANTED.max_examples} "
                f"examples")


def plant(monkeypatch, module, name: str, mutant) -> None:
    """Replace module.name everywhere npformer holds that object (imports by name, the activation
    table), so every caller sees the mutant."""
    original = getattr(module, name)
    for mod_name, mod in list(sys.modules.items()):
        if mod_name.split(".")[0] != "npformer" or mod is None:
            continue
        for attr, value in list(vars(mod).items()):
            if value is original:
                monkeypatch.setattr(mod, attr, mutant)
    for key, pair in list(npformer.layers.activations.ACTIVATION_PAIRS.items()):
        if original in pair:
            monkeypatch.setitem(npformer.layers.activations.ACTIVATION_PAIRS, key,
                                tuple(mutant if f is original else f for f in pair))


# --------------------------------------------------------------------------------------------------
# the mutants (each wraps or re-implements one original)
# --------------------------------------------------------------------------------------------------
O = {}  # originals, filled at import


def _orig(module, name):
    O[name] = getattr(module, name)
    return module, name


def linear_dW_sign(dout, cache):
    dx, dW, db = O["linear_backward"](dout, cache)
    return dx, -dW, db                                             # sign flipped


def linear_dx_transposed(dout, cache):
    dx, dW, db = O["linear_backward"](dout, cache)
    W = cache.W
    if W.shape[0] == W.shape[1]:
        dx = dout @ W.T                                            # W^T where W belongs
    return dx, dW, db


def layernorm_missing_variance_term(dout, cache):
    xhat, rstd, gamma = cache
    D = xhat.shape[-1]
    G2 = dout.reshape(-1, D)
    g = dout * gamma
    dx = rstd * (g - g.mean(axis=-1, keepdims=True))               # "- xhat * mean(g * xhat)" lost
    return dx, (G2 * xhat.reshape(-1, D)).sum(0), G2.sum(0)


def attention_backward_ignores_mask(dweights, cache):
    q, k, weights, scale = cache
    s = (q @ k.swapaxes(-1, -2)) * scale                           # recomputed WITHOUT the mask
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return O["attention_weights_backward"](dweights, cache._replace(weights=p.astype(q.dtype)))


def attention_missing_scale(dweights, cache):
    dq, dk = O["attention_weights_backward"](dweights, cache)
    return dq / cache.scale, dk / cache.scale                      # 1/sqrt(dk) forgotten


def attention_softmax_transposed(dweights, cache):
    q, k, weights, scale = cache
    row_dot = (dweights * weights).sum(axis=-2, keepdims=True)     # summed over queries, not keys
    ds = weights * (dweights - row_dot)
    return (ds @ k) * scale, (ds.swapaxes(-1, -2) @ q) * scale


def mha_value_grad_dropped(self, dout):
    dq, dk, dv = O["MultiHeadAttention.backward"](self, dout)
    return dq, dk, np.zeros_like(dv)                               # value path forgotten


def softmax_wrong_axis(dout, cache):
    y, axis = cache
    other = 0 if (axis % y.ndim) != 0 else y.ndim - 1
    return y * (dout - (dout * y).sum(axis=other, keepdims=True))  # sum along the wrong axis


def log_softmax_missing_sum(dout, cache):
    y, axis = cache
    return dout - np.exp(y) * dout                                 # sum(G) replaced by G


def embedding_padding_row_learns(dout, cache):
    ids, (V, D), dtype, scale, padding_idx = cache
    dW = np.zeros((V, D), dtype=dtype)
    np.add.at(dW, ids.reshape(-1), dout.reshape(-1, D) * scale)    # padding row not zeroed
    return dW


def gelu_missing_pdf_term(dout, cache):
    return dout * cache.cdf                                        # x * phi(x) dropped


def relu_passes_negatives(dout, cache):
    return dout.copy()                                             # gate forgotten


def dropout_missing_rescale(dout, cache):
    return dout if cache.mask is None else dout * cache.mask       # 1 / (1 - p) forgotten


def cross_entropy_not_averaged(dout, cache):
    return O["cross_entropy_backward"](dout, cache) * cache.n_counted   # sum instead of mean


def learned_positions_first_sequence_only(dout, cache):
    offset, T, (L, D) = cache
    dtable = np.zeros((L, D), dtype=dout.dtype)
    dtable[offset:offset + T] = dout.reshape(-1, T, D)[0]          # batch sum forgotten
    return dout, dtable


def encoder_layer_residual_dropped(self, dout):
    if self.config.norm_first:
        return O["EncoderLayer.backward"](self, dout)
    dr2 = self.norm2.backward(dout)
    dx1 = dr2 + self.feed_forward.backward(self.dropout2.backward(dr2))
    dr1 = self.norm1.backward(dx1)
    dq, dk, dv = self.self_attn.backward(self.dropout1.backward(dr1))
    return dq + dk + dv                                            # "+ dr1" (the residual) lost


class Bug(NamedTuple):
    name: str
    target: tuple          # (module or class, attribute)
    mutant: Callable
    catches: tuple         # ((suite test, regex the first line must match), ...)


PM = r"^parity mismatch: "
BUGS = [
    Bug("linear backward: dW sign flipped", _orig(npformer.layers.linear, "linear_backward"),
        linear_dW_sign,
        ((T_lin.test_linear_module, PM + r"weight\.grad "),
         (T_mod.test_model_eval_built_masks, PM + r"\S+\.weight\.grad "))),
    Bug("linear backward: dx = dout @ W.T (transposed matrix)",
        ("linear", "linear_backward"), linear_dx_transposed,
        # out_proj's dx feeds the heads: the first wrong tensor in backward order is a projection's
        ((T_att.test_mha_self_attention, PM + r"[qkv]_proj\.(weight|bias)\.grad "),
         (T_lay.test_encoder_layer, PM + r"\S+\.grad "))),
    Bug("layernorm backward: variance term missing from dx",
        _orig(npformer.layers.layernorm, "layernorm_backward"), layernorm_missing_variance_term,
        ((T_norm.test_layernorm_module, PM + r"x\.grad "),
         (T_mod.test_model_eval_built_masks, PM + r"\S+\.grad "))),
    Bug("attention backward: mask not applied (softmax recomputed unmasked)",
        _orig(npformer.layers.attention, "attention_weights_backward"), attention_backward_ignores_mask,
        ((T_att.test_sdpa_pair_vs_torchformer, PM + r"[qk]\.grad "),
         (T_att.test_mha_self_attention, PM + r"(q_proj|k_proj)\.(weight|bias)\.grad "),
         (T_mod.test_model_eval_built_masks, PM + r"\S+\.grad "))),
    Bug("attention backward: 1/sqrt(dk) missing from dQ, dK (wrong scale)",
        ("attention", "attention_weights_backward"), attention_missing_scale,
        ((T_att.test_sdpa_pair_vs_torchformer, PM + r"[qk]\.grad "),)),
    Bug("attention backward: softmax Jacobian summed over queries (transposed)",
        ("attention", "attention_weights_backward"), attention_softmax_transposed,
        ((T_att.test_sdpa_pair_vs_torch_functional_sdpa, PM + r"[qk]\.grad "),)),
    Bug("multi-head attention backward: value gradient dropped",
        (npformer.layers.attention.MultiHeadAttention, "backward"), mha_value_grad_dropped,
        ((T_att.test_mha_cross_attention, PM + r"value\.grad "),
         (T_lay.test_decoder_layer, PM + r"(memory|x)\.grad "))),
    Bug("softmax backward: sum along the wrong axis",
        _orig(npformer.layers.softmax, "softmax_backward"), softmax_wrong_axis,
        ((T_norm.test_softmax_and_log_softmax_pairs, PM + r"x\.grad "),)),
    Bug("log_softmax backward: sum(G) replaced by G",
        _orig(npformer.layers.softmax, "log_softmax_backward"), log_softmax_missing_sum,
        ((T_norm.test_softmax_and_log_softmax_pairs, PM + r"x\.grad "),)),
    Bug("embedding backward: padding row receives gradient",
        _orig(npformer.layers.embedding, "embedding_backward"), embedding_padding_row_learns,
        ((T_emb.test_embedding_module, PM + r"weight\.grad "),
         (T_mod.test_model_eval_built_masks, PM + r"(src|tgt)_embed\.weight\.grad "))),
    Bug("gelu backward: x * phi(x) term missing",
        _orig(npformer.layers.activations, "gelu_backward"), gelu_missing_pdf_term,
        ((T_lin.test_activation_module, PM + r"x\.grad "),
         (T_lay.test_feedforward, PM + r"\S+\.grad "))),
    Bug("relu backward: gate forgotten (negatives pass gradient)",
        _orig(npformer.layers.activations, "relu_backward"), relu_passes_negatives,
        ((T_lin.test_activation_module, PM + r"x\.grad "),)),
    Bug("dropout backward: 1/(1-p) rescale missing",
        _orig(npformer.layers.dropout, "dropout_backward"), dropout_missing_rescale,
        ((T_loss.test_dropout_module_with_replayed_mask, PM + r"x\.grad "),
         (T_mod.test_model_training_replayed_dropout_with_loss, PM + r"\S+\.grad "))),
    Bug("cross-entropy backward: not divided by the number of counted targets",
        _orig(npformer.layers.loss, "cross_entropy_backward"), cross_entropy_not_averaged,
        ((T_loss.test_cross_entropy_pair_vs_torch, PM + r"logits\.grad "),
         (T_mod.test_model_training_replayed_dropout_with_loss, PM + r"output\.grad "))),
    Bug("learned positions backward: batch sum missing",
        _orig(npformer.layers.positional, "positional_backward"), learned_positions_first_sequence_only,
        ((T_emb.test_positional_module, PM + r"weight\.grad "),)),
    Bug("encoder layer backward: residual gradient dropped (post-norm)",
        (npformer.models.encoder.EncoderLayer, "backward"), encoder_layer_residual_dropped,
        ((T_lay.test_encoder_layer, PM + r"x\.grad "),)),
]
O["MultiHeadAttention.backward"] = npformer.layers.attention.MultiHeadAttention.backward
O["EncoderLayer.backward"] = npformer.models.encoder.EncoderLayer.backward
MODULES = {"linear": npformer.layers.linear, "attention": npformer.layers.attention}


@pytest.mark.parametrize("bug", BUGS, ids=[b.name for b in BUGS])
def test_planted_bug_is_caught_and_named(bug, monkeypatch):
    owner, attr = bug.target
    owner = MODULES.get(owner, owner)
    if isinstance(owner, type):
        monkeypatch.setattr(owner, attr, bug.mutant)
    else:
        plant(monkeypatch, owner, attr, bug.mutant)
    for test_fn, pattern in bug.catches:
        err = run_suite_test(test_fn)
        first = str(err).splitlines()[0]
        print(f"\nPLANTED | {bug.name} | {test_fn.__module__.split('.')[-1]}::{test_fn.__name__} "
              f"| {first}")
        assert re.search(pattern, first), (f"{test_fn.__name__} failed, but its message does not "
                                           f"name the expected tensor ({pattern}):\n{err}")
        assert "worst index" in str(err) and "x tolerance" in str(err)


def test_without_a_bug_the_same_runs_pass():
    """The control: the same re-run machinery passes on the unmodified code."""
    for test_fn in (T_lin.test_linear_module, T_att.test_sdpa_pair_vs_torchformer,
                    T_norm.test_layernorm_module):
        h = test_fn.hypothesis
        fresh = given(**h._given_kwargs)(h.inner_test)
        fresh._hypothesis_internal_use_settings = settings(PLANTED, max_examples=10)
        fresh()
