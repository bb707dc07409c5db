"""Sequence lengths and padding at their edges, in both twins: rows of exactly max_len tokens
(accepted, the last learned position used), max_len + 1 (refused alike, naming the argument), a
row of one real token beside a row with no padding, and an incremental step that ends exactly at
max_len (accepted) or one past it (refused). Outputs and every attention map are compared."""
import numpy as np
import pytest
import torch

from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer
from torchformer.layers.attention import set_need_weights
from torchformer.models.bridge import to_torch

L = 6
CFG = dict(d_model=8, num_heads=2, d_ff=16, vocab_size=12, max_len=L, dtype="float64",
           dropout=0.0, positional="learned", pad_id=0)


def _maps(model):
    return {n: m.attn_weights for n, m in model.named_modules() if hasattr(m, "attn_weights")}


def _compare(npm, tm, *inputs):
    want = npm(*inputs)
    with torch.no_grad():
        got = tm(*[torch.as_tensor(a) for a in inputs])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    a, b = _maps(npm), _maps(tm)
    assert sorted(a) == sorted(b) and a
    for n in a:
        np.testing.assert_allclose(b[n].numpy(), a[n], rtol=1e-10, atol=1e-12, err_msg=n)
    return want, a


def test_full_length_rows_beside_a_one_token_row_in_both_twins():
    npm = Transformer(TransformerConfig(num_encoder_layers=1, num_decoder_layers=1, **CFG),
                      seed=2).eval()
    tm = set_need_weights(to_torch(npm).eval(), True)
    src = np.array([[3, 4, 5, 6, 7, 2], [5, 0, 0, 0, 0, 0]])          # no padding / one token
    tgt = np.array([[1, 3, 4, 5, 6, 7], [1, 0, 0, 0, 0, 0]])
    out, maps = _compare(npm, tm, src, tgt)
    assert np.isfinite(out).all()
    enc = maps["encoder.layers.0.self_attn"]                           # (B, H, T, T)
    assert (enc[1, :, :, 1:] == 0).all() and np.allclose(enc[1, :, :, 0], 1.0)  # one key left
    assert (enc[0] > 0).all()                                          # nothing masked


@pytest.mark.parametrize("which", ["src", "tgt"])
def test_one_token_past_max_len_is_refused_alike(which):
    npm = Transformer(TransformerConfig(num_encoder_layers=1, num_decoder_layers=1, **CFG))
    tm = to_torch(npm)
    ok = np.full((1, L), 3)
    long = np.full((1, L + 1), 3)
    args = (long, ok) if which == "src" else (ok, long)
    msgs = []
    for model, conv in ((npm, np.asarray), (tm, torch.as_tensor)):
        with pytest.raises(ValueError, match=f"{which}: expected a sequence length <= max_len={L}, "
                                             f"got {L + 1}") as e:
            model(*[conv(a) for a in args])
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_an_incremental_step_ending_exactly_at_max_len_is_accepted_one_past_refused():
    npm = CausalLM(TransformerConfig(num_encoder_layers=0, num_decoder_layers=1, **CFG),
                   seed=3).eval()
    tm = to_torch(npm).eval()
    ids = np.array([[3, 4, 5, 6, 7, 8]])
    a, b = [{}], [{}]
    npm(ids[:, :L - 1], caches=a, offset=0)
    with torch.no_grad():
        tm(torch.as_tensor(ids[:, :L - 1]), caches=b, offset=0)
        last_t = tm(torch.as_tensor(ids[:, L - 1:]), caches=b, offset=L - 1)
    last = npm(ids[:, L - 1:], caches=a, offset=L - 1)                 # position max_len - 1
    np.testing.assert_allclose(last_t.numpy(), last, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(last[:, -1], npm(ids)[:, -1], rtol=1e-10, atol=1e-12)
    msgs = []
    for model, conv, caches in ((npm, np.asarray, a), (tm, torch.as_tensor, b)):   # full caches
        with pytest.raises(ValueError, match="max_len") as e:
            model(conv(ids[:, :1]), caches=caches, offset=L)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
