"""Submissions that lie to what the oracle reads from their code: each hostile file under
parity_tests/oracle_hostile/ is wrong where a caller uses it as the assignment says and right only
where the oracle's reading of its style sends the calls."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile")


def test_an_activation_wrong_only_under_the_assignments_spelling_is_a_mismatch():
    """The build is tried with the assignment's name first; torch.nn's class name only where that
    raised, so a constructor taking 'relu' (and computing a leaky ReLU) is compared under it."""
    path = os.path.join(HOSTILE, "activation_spelling_split.py:SpellingSplitFFN")
    for act in ("relu", "gelu"):
        res = check("ffn", path, examples=10, settings={"activation": act})
        assert res.verdict == "mismatch", render_text(res)
        assert not any("torch.nn spells its class" in n for n in res.notes), res.notes


def test_a_layer_found_time_first_is_named_and_incomplete_where_batches_are_required():
    """nn.MultiheadAttention without batch_first=True in a layer documented (batch, seq, d): the
    probe's time-first finding is the gap `batch`, so `grade` (every requirement) gives no credit."""
    path = os.path.join(HOSTILE, "forgotten_batch_first.py:ForgottenBatchFirstLayer")
    quick = check("encoder_layer", path, examples=8)
    assert quick.verdict == "match", render_text(quick)
    assert "time-first" in quick.gaps.get("batch", ""), quick.gaps
    graded = check("encoder_layer", path, examples=8, require=("batch",))
    assert graded.verdict == "incomplete", render_text(graded)


def test_a_torch_layer_mixing_a_batch_it_refuses_only_at_the_probes_size_gets_no_batch_credit():
    """Found written for one (T, d) sequence (it refused the probe's batch of three), it is
    compared at batch 1 only: the report names batches as not compared, and a check requiring
    them is incomplete (its batch mixing is not caught, docs/ORACLE.md says why)."""
    path = os.path.join(HOSTILE, "pooled_batch_norm.py:PooledBatchNorm")
    quick = check("layernorm", path, examples=8)
    assert quick.verdict == "match", render_text(quick)
    assert "only batch 1 was drawn" in quick.gaps.get("batch", ""), quick.gaps
    graded = check("layernorm", path, examples=8, require=("batch",))
    assert graded.verdict == "incomplete", render_text(graded)


LAZY_LOOKUP = '''
import torch.nn as nn


class LazyActFFN(nn.Module):
    def __init__(self, d_model, d_ff, activation="ReLU"):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.activation = activation

    def forward(self, x):
        return self.fc2(getattr(nn, self.activation)()(self.fc1(x))){}
'''


@pytest.mark.parametrize("act", ["relu", "gelu"])
def test_an_activation_looked_up_by_class_name_in_forward_still_matches(tmp_path, act):
    """Built with the assignment's name, it raises only when called: the example is built again
    with the class name and called again; a planted bug (a residual added) still fails."""
    right, wrong = tmp_path / "lazy_right.py", tmp_path / "lazy_wrong.py"
    right.write_text(LAZY_LOOKUP.replace("{}", ""))
    wrong.write_text(LAZY_LOOKUP.replace("{}", " + x"))
    res = check("ffn", f"{right}:LazyActFFN", examples=8, settings={"activation": act})
    assert res.verdict == "match", render_text(res)
    res = check("ffn", f"{wrong}:LazyActFFN", examples=8, settings={"activation": act}, shrink=False)
    assert res.verdict != "match", render_text(res)


CALLED_BIAS = '''
import torch
import torch.nn.functional as F
from torch import nn


class CalledBiasMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.c_fc = nn.Linear(config.n_embd, config.d_ff)
        self.c_proj = nn.Linear(config.d_ff, config.n_embd)

    def forward(self, x):
        if self.config.bias:
            return self.c_proj(F.relu(self.c_fc(x)))
        return F.linear(F.relu(F.linear(x, self.c_fc.weight)), self.c_proj.weight)
'''


def test_a_config_switch_read_only_when_called_or_overwritten_is_flipped_too(tmp_path):
    """The bias_ctor run reads the config's switches before the build and after the example's
    calls, so a `bias` read in forward, or overwritten by the constructor, is flipped: ignored
    (the hostiles) it fails, honoured it matches."""
    res = check("ffn", os.path.join(HOSTILE, "config_flag_read_when_called.py:CalledBiasMLP"),
                examples=8)
    assert res.verdict == "mismatch", render_text(res)
    assert res.detail.get("mode") == "bias_ctor", res.detail
    res = check("ffn", os.path.join(HOSTILE, "config_flag_overwritten.py:OverwrittenBiasMLP"),
                examples=8)                   # overwritten by the constructor: its value before
    assert res.verdict == "mismatch", render_text(res)
    assert res.detail.get("mode") == "bias_ctor", res.detail
    right = tmp_path / "called_bias.py"
    right.write_text(CALLED_BIAS)
    res = check("ffn", f"{right}:CalledBiasMLP", examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_time_first_positional_module_is_named_with_what_it_adds_batch_first():
    path = candidate_path("time_first_layers.py") + ":TimeFirstPositionalEncoding"
    res = check("positional", path, examples=5)
    assert res.verdict == "match", render_text(res)
    assert "one table row per sequence" in res.gaps.get("batch", ""), res.gaps


def test_source_nested_too_deeply_to_unparse_is_no_oracle_error():
    """A mask annotation and a `__code__` target a thousand `+` deep: the parent's claim reading
    and import scan, and the worker's mask reading, skip what they cannot write or walk."""
    res = check("sdpa", os.path.join(HOSTILE, "deep_expression_source.py:attention"), examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_model_building_its_decoder_with_the_encoders_depth_is_caught_when_the_depths_are_words():
    """`num_layers_enc` / `num_layers_dec` are read by their words when the model is built, so the
    search also draws the two depths apart: a decoder built with the encoder's depth then has a
    layer the reference lacks (or lacks one), a failing verdict naming it; the right twin matches."""
    path = os.path.join(HOSTILE, "stack_count_unread.py")
    res = check("model", f"{path}:StackDepthTransformer", examples=12, shrink=False)
    assert res.verdict in ("interface_error", "mismatch"), render_text(res)
    right = check("model", f"{path}:StackDepthTransformerRight", examples=8)
    assert right.verdict == "match", render_text(right)


@pytest.mark.parametrize("wrong, right", [
    ("stack_depth_config.py:ConfigDepthTransformer", "stack_depth_config.py:ConfigDepthTransformerRight"),
    ("stack_depth_config_bag.py:BagDepthTransformer", "stack_depth_config_bag.py:BagDepthTransformerRight")])
def test_a_model_reading_its_encoders_depth_from_a_config_for_both_stacks_fails(wrong, right):
    """A config class of its own with a decoder depth, or the oracle's config object read under a
    stack's depth while building: the depths are drawn apart, and the decoder built with the
    encoder's depth fails; the right twins match."""
    res = check("model", os.path.join(HOSTILE, wrong), examples=12, shrink=False)
    assert res.verdict in ("interface_error", "mismatch"), render_text(res)
    res = check("model", os.path.join(HOSTILE, right), examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_model_reading_one_depth_from_a_config_for_both_stacks_still_matches():
    """`config.num_layers` for both stacks: one depth, drawn the same for both."""
    res = check("model", os.path.join(HOSTILE, "stack_depth_config_bag.py:BagOneDepthTransformer"), examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_fill_name_bound_large_only_in_another_scope_is_still_compared():
    """The hidden-mask reading trusts `neg` (bound to a large negative in another method) and hands
    masks over True = hidden; the module's -1.0 the fill really uses leaves hidden keys weighted:
    a mismatch, as every quantity is compared under the convention handed over."""
    res = check("sdpa", os.path.join(HOSTILE, "fill_name_other_scope.py:OtherScopeFill"), examples=10, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity == "output", render_text(res)


@pytest.mark.parametrize("name", ["UpstreamBlindLayerNorm", "CutLayerNorm"])
def test_an_own_autograd_right_only_under_a_ones_seed_is_a_mismatch(name):
    """Differentiated through `(out * upstream).sum()` of its own operators, a last step handing
    its input ones (or an output cut from its graph) shows in the input gradient."""
    res = check("layernorm", os.path.join(HOSTILE, f"ones_seeded_upstream_blind.py:{name}"), examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity == "grad_input:x", render_text(res)


@pytest.mark.parametrize("name", ["ScaleByDefaultWidth", "NumpyScaleByDefaultWidth"])
def test_an_optional_head_width_used_only_in_the_scale_is_compared_at_its_default(name):
    """`d_k=64` beside the head count is handed the drawn head width; a build leaving it at its
    default keeps the weights' shapes, so it is compared there too, and its 1/sqrt(64) differs."""
    res = check("mha", os.path.join(HOSTILE, f"default_head_width_scale.py:{name}"), examples=10)
    assert res.verdict == "mismatch", render_text(res)
    assert "left at their defaults" in res.message, res.message


@pytest.mark.parametrize("comp, name", [("ffn", "RateScaledFeedForward"), ("layernorm", "RateScaledLayerNorm"),
                                        ("ffn", "NumpyRateScaledFeedForward")])
def test_an_eval_output_scaled_by_the_constructors_dropout_rate_is_a_mismatch(comp, name):
    """Every build hands a constructor's dropout rates 0; the rate_ctor run builds at 0.5 and calls
    in eval(), where dropout is the identity, so a scale by 1 - rate there differs."""
    res = check(comp, os.path.join(HOSTILE, f"eval_scaled_by_rate.py:{name}"), examples=10)
    assert res.verdict == "mismatch", render_text(res)
    assert "dropout rates at 0.5" in res.message, res.message


NUMPY_DROPOUT = '''
import numpy as np


class NumpyDropoutFeedForward:
    def __init__(self, d_model, d_ff, dropout=0.1):
        self.W1, self.b1 = np.zeros((d_model, d_ff)), np.zeros(d_ff)
        self.W2, self.b2 = np.zeros((d_ff, d_model)), np.zeros(d_model)
        self.p, self.training = dropout, True

    def eval(self):
        self.training = False

    def forward(self, x):
        h = np.maximum(x @ self.W1 + self.b1, 0.0)
        if self.training and self.p > 0:
            h = h * (np.random.rand(*h.shape) >= self.p) / (1.0 - self.p)
        return h @ self.W2 + self.b2


class NumpyAlwaysDropFeedForward:
    """No eval notion at all: drops whenever its rate is not 0 (left uncompared by rate_ctor)."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        self.W1, self.b1 = np.zeros((d_model, d_ff)), np.zeros(d_ff)
        self.W2, self.b2 = np.zeros((d_ff, d_model)), np.zeros(d_model)
        self.p = dropout

    def forward(self, x):
        h = np.maximum(x @ self.W1 + self.b1, 0.0)
        if self.p > 0:
            h = h * (np.random.rand(*h.shape) >= self.p) / (1.0 - self.p)
        return h @ self.W2 + self.b2
'''


@pytest.mark.parametrize("name", ["NumpyDropoutFeedForward", "NumpyAlwaysDropFeedForward"])
def test_numpy_dropout_built_at_a_rate_still_matches(tmp_path, name):
    """A NumPy feed-forward dropping only while training matches at the rate; one with no eval()
    nor `training` (it drops whenever its rate is not 0) is not built at a rate at all."""
    path = tmp_path / "numpy_dropout.py"
    path.write_text(NUMPY_DROPOUT)
    res = check("ffn", f"{path}:{name}", examples=8)
    assert res.verdict == "match", render_text(res)


def test_attention_dropping_a_mask_of_one_batch_row_is_a_mismatch():
    """A mask alike in every batch row (a causal one) is also handed over as (1, 1, Tq, Tk) in the
    broadcast_mask run, the form a decoder makes it in; code dropping it there differs."""
    res = check("mha", os.path.join(HOSTILE, "batch_one_mask_dropped.py:BatchOneMaskDropped"), examples=12)
    assert res.verdict == "mismatch", render_text(res)
    assert "one batch row" in res.message, res.message


def test_a_wrong_causal_path_behind_a_mask_switch_is_named_and_incomplete_where_masks_are_required():
    """`forward(x, mask=True)` is passed False for multi-head attention: the switch's wrong path is
    never compared, so masks are a gap, and a check requiring them gives no match."""
    path = os.path.join(HOSTILE, "causal_switch_wrong_future.py:WrongFutureSwitch")
    quick = check("mha", path, examples=6)
    assert quick.verdict == "match", render_text(quick)
    assert "masks were not compared" in quick.gaps.get("masks", ""), quick.gaps
    graded = check("mha", path, examples=6, require=("masks",))
    assert graded.verdict == "incomplete", render_text(graded)


def test_an_optional_second_head_count_keeps_its_default_and_is_compared():
    res = check("mha", os.path.join(HOSTILE, "second_head_count_scale.py:SecondHeadCountScale"), examples=10,
                shrink=False)
    assert res.verdict == "mismatch", render_text(res)
