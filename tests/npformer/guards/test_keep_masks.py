"""Dropout's replayed masks are checked by guards registered for Dropout: the type when queued, the
shape when a forward takes the mask, also inside a model where children run unchecked."""
import numpy as np
import pytest

import npformer as nf
from npformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks
from npformer.layers.module import registered


def test_dropout_has_both_mask_checks_registered():
    assert registered("replay", nf.Dropout) is not None
    assert registered("replayed_mask", nf.Dropout) is not None


def test_a_mask_of_the_wrong_type_is_refused_when_queued():
    d = nf.Dropout(0.5)
    with pytest.raises(TypeError, match=r"^mask: expected a bool numpy array \(True = keep\), got "
                                        r"array of shape \(2,\) and dtype float64$"):
        d.replay(np.ones(2))
    with pytest.raises(TypeError, match=r"^mask: expected a bool numpy array \(True = keep\), got list$"):
        d.replay([True])
    assert d._replay is None


def test_a_mask_of_the_wrong_shape_is_refused_inside_a_model():
    cfg = nf.TransformerConfig(vocab_size=11, d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                               num_decoder_layers=1, max_len=8, dropout=0.5, dtype="float64")
    model = nf.CausalLM(cfg, seed=0)
    ids = np.ones((2, 4), dtype=np.int64)
    model(ids)
    masks = collect_dropout_masks(model)
    name = sorted(masks)[0]
    replay_dropout_masks(model, {name: np.ones(masks[name].shape[:-1] + (3,), bool)})
    with pytest.raises(ValueError, match=r"^mask \(queued by Dropout.replay\): expected shape "):
        model(ids)
