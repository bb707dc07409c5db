"""Padding and batch independence, drawn over small random configs (tests/npformer/model_invariants.py):
a right-padded row's real positions equal the row run alone (every model family; padding given by
pad_id, or by key keep-masks / BERT's attention_mask over arbitrary tokens); the loss ignoring
pad_id is the token-weighted mean of the rows' own losses, gradients included; row i's outputs,
attention weights and input gradients do not depend on the other rows, in training mode with
dropout too. Plain layers and npformer.fast's methods."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.npformer.model_invariants import (
    Twin,
    check_batch_independence,
    check_loss_ignoring_padding,
    check_padded_rows_equal_rows_alone,
    configs,
    draw_ids,
    draw_lengths,
    model_settings,
    right_pad,
)


@pytest.fixture(scope="module")
def make_twin():
    """The twin the properties run on, made as make_twin(variant): here npformer, variant True
    binding npformer.fast's methods (tests/torchformer/models/test_tf_padded_and_independent_rows.py collects
    these tests again with torchformer's)."""
    return Twin

ENCODERS = ["EncoderClassifier", "BertModel", "BertForMaskedLM", "BertForSequenceClassification"]
BERT_LAYOUT = st.fixed_dictionaries({"type_vocab_size": st.sampled_from([0, 2]),
                                     "embedding_norm": st.booleans()})


def padded_batch(data, config, rows=None):
    B = rows or data.draw(st.integers(2, 3))
    width = data.draw(st.integers(1, 6))
    lengths = draw_lengths(data.draw, B, width)
    ids = draw_ids(data.draw, config, B, width, pads=False)
    return ids, lengths


@pytest.mark.parametrize("cls", ["CausalLM"] + ENCODERS)
@model_settings()
@given(data=st.data(), variant=st.booleans())
def test_a_padded_row_equals_the_row_alone(data, cls, variant, make_twin):
    config = data.draw(configs(**(data.draw(BERT_LAYOUT) if cls.startswith("Bert") else {})))
    ids, lengths = padded_batch(data, config)
    check_padded_rows_equal_rows_alone(make_twin(variant), cls, config, right_pad(ids, lengths, config.pad_id),
                                       lengths)


@pytest.mark.parametrize("cls", ["CausalLM"] + ENCODERS)
@model_settings()
@given(data=st.data(), variant=st.booleans())
def test_key_padding_arguments_hide_whatever_tokens_the_padding_holds(data, cls, variant, make_twin):
    """The padded positions hold arbitrary real tokens; the key keep-mask argument alone (BERT's
    attention_mask) marks them, and the real positions equal the row alone (mean pooling too);
    with a pad id or without one."""
    layout = data.draw(BERT_LAYOUT) if cls.startswith("Bert") else {}
    config = data.draw(configs(pad_id=data.draw(st.sampled_from([0, None])), **layout))
    ids, lengths = padded_batch(data, config)
    keep = np.arange(ids.shape[1])[None, :] < np.asarray(lengths)[:, None]          # (B, T)
    kw = ({"attention_mask": keep.astype(np.int64)} if cls.startswith("Bert") else
          {"key_keep": keep} if cls == "CausalLM" else {"src_key_keep": keep})
    check_padded_rows_equal_rows_alone(make_twin(variant), cls, config, ids, lengths, **kw)


@model_settings()
@given(data=st.data(), variant=st.booleans(), garbage=st.booleans())
def test_a_padded_translation_pair_equals_the_pair_alone(data, variant, garbage, make_twin):
    config = data.draw(configs())
    tgt, tgt_lengths = padded_batch(data, config)
    src, src_lengths = padded_batch(data, config, rows=len(tgt_lengths))
    if garbage:
        keep = {"src_key_keep": np.arange(src.shape[1])[None, :] < np.asarray(src_lengths)[:, None],
                "tgt_key_keep": np.arange(tgt.shape[1])[None, :] < np.asarray(tgt_lengths)[:, None]}
    else:
        keep = {}
        src, tgt = right_pad(src, src_lengths, config.pad_id), right_pad(tgt, tgt_lengths, config.pad_id)
    check_padded_rows_equal_rows_alone(make_twin(variant), "Transformer", config, tgt, tgt_lengths, src=src,
                                       src_lengths=src_lengths, **keep)


@model_settings()
@given(data=st.data(), cls=st.sampled_from(["CausalLM", "Transformer"]), variant=st.booleans())
def test_the_loss_ignoring_padding_is_the_token_weighted_mean_of_the_rows(data, cls, variant, make_twin):
    config = data.draw(configs())
    ids, lengths = padded_batch(data, config)
    targets = right_pad(draw_ids(data.draw, config, *ids.shape, pads=False), lengths, config.pad_id)
    src = src_lengths = None
    if cls == "Transformer":
        src, src_lengths = padded_batch(data, config, rows=len(lengths))
        src = right_pad(src, src_lengths, config.pad_id)
    check_loss_ignoring_padding(make_twin(variant), cls, config, right_pad(ids, lengths, config.pad_id),
                                lengths, targets, src=src, src_lengths=src_lengths,
                                label_smoothing=data.draw(st.sampled_from([0.0, 0.1])))


GRAD_INPUTS = {"CausalLM": ("decoder_input",), "Transformer": ("encoder_input", "decoder_input"),
               "EncoderClassifier": ("encoder_input",),
               "BertModel": ("encoder_input",), "BertForMaskedLM": ("encoder_input",)}


@model_settings()
@given(data=st.data(), cls=st.sampled_from(sorted(GRAD_INPUTS)), variant=st.booleans(),
       train=st.booleans())
def test_a_row_does_not_depend_on_the_other_rows(data, cls, variant, train, make_twin):
    config = data.draw(configs())
    B, T = data.draw(st.integers(2, 3)), data.draw(st.integers(1, 5))
    row = data.draw(st.integers(0, B - 1))
    arrays = [draw_ids(data.draw, config, B, T)] + (
        [draw_ids(data.draw, config, B, data.draw(st.integers(1, 5)))] if cls == "Transformer" else [])
    others = [a.copy() for a in arrays]
    for a in others:                  # every other row redrawn (pads allowed: their masks change too)
        fresh = draw_ids(data.draw, config, B, a.shape[1])
        a[np.arange(B) != row] = fresh[np.arange(B) != row]
    args_a, args_b = tuple(arrays[::-1]), tuple(others[::-1])          # Transformer: (src, tgt)
    check_batch_independence(make_twin(variant), cls, config, args_a, args_b, row, train,
                             inputs=GRAD_INPUTS[cls])
