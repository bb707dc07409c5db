"""The key/value caches both twins build during incremental decoding, read entry by entry: same
layers, same names, same shapes and values after every step (CausalLM self-attention, Transformer
self- and cross-attention), and the same rows after a beam reorder."""
import numpy as np
import torch

from npformer.decoding.generate import reorder_caches as np_reorder
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer
from torchformer.decoding.generate import reorder_caches
from torchformer.models.bridge import to_torch

CFG = dict(d_model=8, num_heads=2, d_ff=16, vocab_size=12, max_len=10, dtype="float64",
           dropout=0.0)


def _flat(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def _assert_same_caches(np_caches, t_caches, where):
    assert len(np_caches) == len(t_caches)
    for i, (a, b) in enumerate(zip(np_caches, t_caches)):
        fa, fb = _flat(a), _flat(b)
        assert sorted(fa) == sorted(fb), (where, i)
        assert fa, (where, i)                                          # something was cached
        for name in fa:
            x = fa[name]
            y = fb[name].numpy() if isinstance(fb[name], torch.Tensor) else fb[name]
            assert np.shape(x) == np.shape(y), (where, i, name)
            np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-13, err_msg=f"{where} {i} {name}")


def test_causal_lm_caches_equal_entry_by_entry_and_after_a_reorder():
    npm = CausalLM(TransformerConfig(num_encoder_layers=0, num_decoder_layers=2, norm_first=True,
                                     **CFG), seed=2).eval()
    tm = to_torch(npm).eval()
    ids = np.array([[3, 4, 5, 6, 7], [8, 0, 9, 10, 11], [5, 5, 5, 5, 5]])
    a, b = [{}, {}], [{}, {}]
    for t, n in ((0, 2), (2, 1), (3, 2)):
        npm(ids[:, t:t + n], caches=a, offset=t)
        with torch.no_grad():
            tm(torch.as_tensor(ids[:, t:t + n]), caches=b, offset=t)
        _assert_same_caches(a, b, f"after position {t + n}")
    order = np.array([2, 0, 0])
    np_reorder(a, order)
    reorder_caches(b, torch.as_tensor(order))
    _assert_same_caches(a, b, "after the reorder")
    assert _flat(a[0])["self.k"].shape[0] == 3


def test_transformer_self_and_cross_caches_equal():
    npm = Transformer(TransformerConfig(num_encoder_layers=1, num_decoder_layers=2, **CFG),
                      seed=4).eval()
    tm = to_torch(npm).eval()
    src = np.array([[3, 4, 5, 2, 0], [6, 7, 2, 0, 0]])
    tgt = np.array([[1, 5, 6, 7], [1, 8, 9, 3]])
    keep = src != 0
    memory = npm.encode(src)
    with torch.no_grad():
        t_memory = tm.encode(torch.as_tensor(src))
    np.testing.assert_allclose(t_memory.numpy(), memory, rtol=1e-12, atol=1e-13)
    a, b = [{}, {}], [{}, {}]
    for t in range(4):
        npm.decode(tgt[:, t:t + 1], memory, keep[:, None, None, :], caches=a, offset=t)
        with torch.no_grad():
            tm.decode(torch.as_tensor(tgt[:, t:t + 1]), t_memory,
                      torch.as_tensor(keep[:, None, None, :]), caches=b, offset=t)
        _assert_same_caches(a, b, f"step {t}")
    names = set(_flat(a[0]))
    assert any(n.startswith("cross") for n in names) and any(n.startswith("self") for n in names)
