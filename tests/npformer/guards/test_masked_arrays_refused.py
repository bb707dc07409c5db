"""A numpy.ma masked array given as token ids, activations, a mask or an upstream gradient is refused
naming the argument. Its own min/max/isfinite skip the masked entries while the math reads the values
under them: a masked id of 99 passed the range check and ended in `IndexError: index 99 is out of
bounds` inside the embedding; a masked NaN passed the finite check and came out as NaN."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf

REFUSED = r"expected a plain numpy array, got a masked array \(numpy\.ma\) of shape "


def _model():
    cfg = nf.TransformerConfig(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1,
                               num_decoder_layers=1, vocab_size=13, pad_id=0, max_len=8)
    return nf.Transformer(cfg, seed=0)


def test_masked_ids_are_refused_by_the_model_and_by_decoding():
    model, tgt = _model(), np.array([[1, 7, 6, 5]])
    src = np.ma.array([[5, 6, 99, 2]], mask=[[0, 0, 1, 0]])
    with pytest.raises(TypeError, match=r"^src: " + REFUSED + r"\(1, 4\).*src\.filled\(0\)"):
        model(src, tgt)
    with pytest.raises(TypeError, match=r"^src: " + REFUSED):
        nf.greedy_decode(model, np.ma.array([[5, 6, 7, 2]], mask=[[0, 0, 1, 0]]), max_new_tokens=2)


def test_a_masked_nan_activation_is_refused():
    x = np.zeros((1, 2, 16), np.float32)
    q = np.ma.array(np.full((1, 2, 16), np.nan, np.float32), mask=True)
    with pytest.raises(TypeError, match=r"^query: " + REFUSED + r"\(1, 2, 16\)"):
        nf.MultiHeadAttention(16, 2)(q, x, x)


def test_masked_masks_and_gradients_are_refused():
    model = _model()
    src, tgt = np.array([[5, 6, 7, 2]]), np.array([[1, 7, 6, 5]])
    with pytest.raises(TypeError, match=r"^src_mask: " + REFUSED):
        model(src, tgt, src_mask=np.ma.array(np.ones((4, 4), bool), mask=np.eye(4, dtype=bool)))
    logits = model(src, tgt)
    with pytest.raises(TypeError, match=r"^dlogits: " + REFUSED):
        model.backward(np.ma.array(np.zeros_like(logits), mask=True))


def test_plain_arrays_and_lists_still_pass():
    model = _model()
    assert model([[5, 6, 7, 2]], np.array([[1, 7, 6, 5]])).shape == (1, 4, 13)
