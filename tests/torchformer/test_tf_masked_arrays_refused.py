"""torchformer takes NumPy ids and masks; a numpy.ma masked array is refused as npformer refuses it
(`np.asarray` dropped the mask, so the values under it were used silently)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torchformer as tf  # noqa: E402

REFUSED = r"expected a plain numpy array, got a masked array \(numpy\.ma\) of shape "


def _model():
    cfg = tf.TransformerConfig(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1,
                               num_decoder_layers=1, vocab_size=13, pad_id=0, max_len=8)
    return tf.Transformer(cfg, seed=0)


def test_masked_ids_and_masks_are_refused_naming_the_argument():
    model = _model()
    tgt = np.array([[1, 7, 6, 5]])
    with pytest.raises(TypeError, match=r"^src: " + REFUSED + r"\(1, 4\)"):
        model(np.ma.array([[5, 6, 7, 2]], mask=[[0, 0, 1, 0]]), tgt)
    with pytest.raises(TypeError, match=r"^src_mask: " + REFUSED + r"\(4, 4\)"):
        model(np.array([[5, 6, 7, 2]]), tgt, src_mask=np.ma.array(np.ones((4, 4), bool), mask=False))
    with pytest.raises(TypeError, match=r"^src: " + REFUSED):
        tf.greedy_decode(model, np.ma.array([[5, 6, 7, 2]], mask=[[0, 0, 1, 0]]), max_new_tokens=2)


def test_plain_numpy_ids_and_masks_still_pass():
    out = _model()(np.array([[5, 6, 7, 2]]), np.array([[1, 7, 6, 5]]), src_mask=np.ones((4, 4), bool))
    assert tuple(out.shape) == (1, 4, 13)
