"""The public mask helpers and mask arguments of torchformer under a PyTorch user's habits: ids
given to `padding_mask` as a float or negative tensor are refused as npformer refuses them (a float
tensor used to give a mask silently); a float mask of 0 and -inf (torch's additive convention, what
`nn.Transformer.generate_square_subsequent_mask` returns) is refused with how to pass it; a device
`causal_mask` cannot use is named."""
import re

import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                           vocab_size=11, pad_id=0, max_len=8)
HINT = ("it holds only 0 and -inf, torch's additive convention (0 = may attend): pass `mask == 0` "
        "as the keep-mask")


@pytest.mark.parametrize("ids, error, message", [
    ([[1.0, 0.0]], TypeError, "ids: expected integer token ids, got dtype"),
    ([[True, False]], TypeError, "ids: expected integer token ids, got dtype"),
    ([[-1, 0]], ValueError, "ids: expected token ids in [0, "),
    ([1, 0], ValueError, "ids: expected 2 dimensions (batch, seq), got shape (2,)"),
], ids=["float", "bool", "negative", "one row"])
def test_padding_mask_refuses_what_npformer_refuses(ids, error, message):
    for twin, as_input in ((tf, torch.tensor), (nf, np.array)):
        with pytest.raises(error, match=re.escape(message)):
            twin.padding_mask(as_input(ids), 0)


@pytest.mark.parametrize("pad_id, error, message", [
    (-1, ValueError, "pad_id: expected None or an int from 0 to 2**63 - 1 (a token id), got -1"),
    (np.int64(-3), ValueError, "pad_id: expected None or an int from 0 to 2**63 - 1 (a token id), got -3"),
    (2 ** 64, ValueError, f"pad_id: expected None or an int from 0 to 2**63 - 1 (a token id), got {2 ** 64}"),
    (0.0, TypeError, "pad_id: expected an int or None, got float"),
    (True, TypeError, "pad_id: expected an int or None, got bool"),
], ids=["negative", "numpy negative", "past int64", "float", "bool"])
def test_padding_mask_refuses_a_pad_id_no_token_can_equal(pad_id, error, message):
    """A negative pad id used to keep every position silently (no id equals it), in both twins."""
    for twin, as_input in ((tf, torch.tensor), (nf, np.array)):
        with pytest.raises(error, match=re.escape(message)):
            twin.padding_mask(as_input([[3, 0]]), pad_id)


def test_padding_mask_of_good_ids_is_unchanged():
    ids = torch.tensor([[3, 4, 0], [5, 0, 0]])
    got = tf.padding_mask(ids, 0)
    assert got.dtype == torch.bool and tuple(got.shape) == (2, 1, 1, 3)
    np.testing.assert_array_equal(got.numpy(), nf.padding_mask(ids.numpy(), 0))


def test_an_additive_causal_mask_is_refused_with_how_to_pass_it():
    model = tf.Transformer(CFG, seed=0).eval()
    src, tgt = torch.tensor([[3, 4, 2]]), torch.tensor([[1, 3, 4]])
    additive = torch.nn.Transformer.generate_square_subsequent_mask(3)
    with pytest.raises(TypeError, match=re.escape(f"tgt_mask: expected a bool keep-mask (or 0/1 "
                                                  f"integers), got dtype torch.float32; {HINT}")):
        model(src, tgt, tgt_mask=additive)
    with pytest.raises(TypeError, match=re.escape(HINT)):
        tf.combine_masks(additive.numpy(), None)
    ref = model(src, tgt)                                 # the causal mask built from pad_id
    torch.testing.assert_close(model(src, tgt, tgt_mask=additive == 0), ref, rtol=0, atol=0)


def test_other_float_masks_get_no_additive_hint():
    with pytest.raises(TypeError) as err:
        tf.combine_masks(torch.ones(2, 2), None)
    assert "additive" not in str(err.value)


def test_causal_mask_names_a_device_it_cannot_use():
    with pytest.raises(ValueError, match=re.escape("device: expected a torch device such as 'cpu'")):
        tf.causal_mask(3, device="gpu")
    assert tf.causal_mask(3, device="cpu").device.type == "cpu"
