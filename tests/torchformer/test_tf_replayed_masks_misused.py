"""Replaying dropout masks, misused, in both twins: `masks` that is not a dict is named (None was
`'NoneType' object is not iterable`, a list was read as module names), and a queued mask of the
wrong shape is refused at the forward that takes it and then dropped, so the next forward draws
afresh. torchformer kept the refused mask queued, so every later forward failed the same way."""
import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf

CONFIG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1, vocab_size=11,
                              max_len=8, dropout=0.5)
TWINS = [(nf, lambda: nf.CausalLM(CONFIG, seed=0), np.array([[1, 2, 3]])),
         (tf, lambda: tf.CausalLM(CONFIG, seed=0), torch.tensor([[1, 2, 3]]))]


@pytest.mark.parametrize("twin,make,ids", TWINS, ids=["npformer", "torchformer"])
@pytest.mark.parametrize("masks", [None, [1], "tgt_dropout"], ids=repr)
def test_masks_that_are_not_a_dict_are_named(twin, make, ids, masks):
    with pytest.raises(TypeError, match="masks: expected a dict {Dropout module name: bool mask}"):
        twin.replay_dropout_masks(make().train(), masks)


@pytest.mark.parametrize("twin,make,ids", TWINS, ids=["npformer", "torchformer"])
def test_a_refused_mask_is_dropped_and_the_next_forward_draws_afresh(twin, make, ids):
    model = make().train()
    twin.replay_dropout_masks(model, {"tgt_dropout": np.ones((2, 2), bool)})
    with pytest.raises(ValueError, match=r"expected shape \(1, 3, 8\) \(the input's\), got \(2, 2\)"):
        model(ids)
    assert tuple(model(ids).shape) == (1, 3, 11)
