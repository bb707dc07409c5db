"""Model mask arguments cannot be misread, in both twins: a (batch, src_len) key-padding mask passed as
src_mask is refused when batch == src_len (it used to be read as (q_len, k_len)); rank-1/3 masks are
refused; key padding has its own (batch, k_len) keep-sense argument with the same result as the
equivalent 4-D mask."""
import numpy as np
import pytest

from npformer.models.causal_lm import CausalLM
from npformer.models.classifier import EncoderClassifier
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer

CFG = TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=1, num_decoder_layers=1,
                        vocab_size=9, max_len=6, pad_id=None, dtype="float64", dropout=0.0)
B = S = T = 3
SRC = np.array([[3, 4, 5], [6, 7, 8], [3, 5, 7]])
TGT = np.array([[1, 4, 5], [1, 7, 8], [1, 5, 7]])
KEEP = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1]], dtype=bool)          # (B, S): True = real token


def twins():
    out = [("numpy", Transformer(CFG, seed=0), EncoderClassifier(CFG, seed=0), CausalLM(CFG, seed=0),
            lambda a: a)]
    try:
        import torch

        import torchformer
        out.append(("torch", torchformer.Transformer(CFG, seed=0),
                    torchformer.EncoderClassifier(CFG, seed=0), torchformer.CausalLM(CFG, seed=0),
                    torch.as_tensor))
    except ImportError:  # pragma: no cover - torch missing: the numpy twin is still checked
        pass
    return out


def as_np(x):
    return x.detach().numpy() if hasattr(x, "detach") else x


@pytest.mark.parametrize("twin", twins(), ids=lambda t: t[0])
def test_batch_by_src_len_mask_as_src_mask_is_refused(twin):
    _, tr, cl, lm, arr = twin
    with pytest.raises(ValueError, match=r"src_mask: a 2-D mask is read as \(q_len, k_len\).*batch "
                                         r"size 3.*ambiguous.*src_key_keep"):
        tr(arr(SRC), arr(TGT), src_mask=arr(KEEP))
    with pytest.raises(ValueError, match=r"src_mask: a 2-D mask.*src_key_keep"):
        cl(arr(SRC), src_mask=arr(KEEP))
    with pytest.raises(ValueError, match=r"mask: a 2-D mask.*key_keep"):
        lm(arr(TGT), mask=arr(KEEP))
    with pytest.raises(ValueError, match=r"src_mask: expected a 4-D \(batch, heads, q_len, k_len\) "
                                         r"keep-mask.*got shape \(3, 3, 3\)"):
        tr(arr(SRC), arr(TGT), src_mask=arr(np.ones((3, 3, 3), bool)))
    with pytest.raises(ValueError, match=r"tgt_mask: expected a 4-D.*got shape \(3,\)"):
        tr(arr(SRC), arr(TGT), tgt_mask=arr(np.ones(3, bool)))
    with pytest.raises(ValueError, match=r"src_key_keep: expected a \(batch, k_len\) = \(3, 3\)"):
        tr(arr(SRC), arr(TGT), src_key_keep=arr(KEEP[:, :2]))


@pytest.mark.parametrize("twin", twins(), ids=lambda t: t[0])
def test_key_keep_equals_the_4d_mask(twin):
    _, tr, cl, lm, arr = twin
    four = KEEP[:, None, None, :]                                    # (B, 1, 1, S)
    causal = np.tril(np.ones((T, T), bool))
    a = as_np(tr(arr(SRC), arr(TGT), src_key_keep=arr(KEEP), tgt_key_keep=arr(KEEP)))
    b = as_np(tr(arr(SRC), arr(TGT), src_mask=arr(four), tgt_mask=arr(four & causal)))
    assert np.array_equal(a, b)
    a2 = as_np(tr(arr(SRC), arr(TGT), src_key_keep=arr(KEEP)))
    assert not np.allclose(a2, as_np(tr(arr(SRC), arr(TGT))))        # it does mask something
    assert np.array_equal(as_np(cl(arr(SRC), src_key_keep=arr(KEEP))),
                          as_np(cl(arr(SRC), src_mask=arr(four))))
    assert np.array_equal(as_np(lm(arr(TGT), key_keep=arr(KEEP))),
                          as_np(lm(arr(TGT), mask=arr(four & causal))))


@pytest.mark.parametrize("twin", twins(), ids=lambda t: t[0])
def test_unambiguous_2d_masks_still_work(twin):
    _, tr, _, _, arr = twin
    src, tgt = SRC[:2], TGT[:2]                                      # batch 2 != q_len 3
    causal = np.tril(np.ones((T, T), bool))
    a = as_np(tr(arr(src), arr(tgt), tgt_mask=arr(causal)))
    b = as_np(tr(arr(src), arr(tgt), tgt_mask=arr(causal[None, None])))
    assert np.array_equal(a, b)
