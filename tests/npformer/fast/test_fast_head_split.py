"""npformer.fast.head_split (the attention core in (batch, head) slices on threads) against the plain
attention: bit for bit.

`MIN_SLICE_ELEMENTS` is lowered to 1 so that small arrays take the split path; each test checks that
it did (the split ran on more than one range). Shapes have a batch or head count not divisible by
the threads, one batch entry (the heads are cut), one head, one query row; masks are full,
causal, padding, all-True, with fully masked rows; scores with NaN and inf entries; float32 and
float64; query/key/value as split_heads views (strided, not contiguous).
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from npformer.fast import head_split as hs
from npformer.fast import rows
from npformer.fast.accelerate import accelerate
from npformer.layers import attention as pat
from npformer.layers.attention import MultiHeadAttention, merge_heads, split_heads
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer

DTYPES = ["float32", "float64"]


def same(got, want, what=""):
    """Identical arrays: shape, dtype and every value (NaN where NaN, the sign of a zero too)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert np.array_equal(got, want, equal_nan=True), f"{what}: values differ"
    assert np.array_equal(np.signbit(got), np.signbit(want)), f"{what}: signs differ"


@pytest.fixture
def split_small(monkeypatch):
    """Every core with at least 2 (batch or head) entries split; returns the list of range counts
    the split jobs ran on."""
    calls: list[int] = []
    original = rows.row_ranges

    def counting(n, parts):
        out = original(n, parts)
        calls.append(len(out))
        return out
    monkeypatch.setattr(hs, "MIN_SLICE_ELEMENTS", 1)
    monkeypatch.setattr(hs, "row_ranges", counting)
    return calls


def _masks(B, H, Tq, Tk):
    rng = np.random.default_rng(5)
    full = rng.random((B, H, Tq, Tk)) > 0.3
    full[0, 0, 0] = False                                          # a fully masked query row
    causal = np.tril(np.ones((Tq, Tk), dtype=bool))                # 2-d, broadcast
    padding = rng.random((B, 1, 1, Tk)) > 0.2
    padding[-1] = False                                            # a batch entry with no key
    no_padding = np.ones((B, 1, 1, Tk), dtype=bool)                # all True: the masking skipped
    return [None, full, causal, padding, no_padding]


def _qkv(B, H, Tq, Tk, dk, dtype, seed=4):
    """q, k, v as split_heads views of (B, T, H * dk) arrays, as the attention module makes them."""
    rng = np.random.default_rng(seed)
    q = split_heads(rng.standard_normal((B, Tq, H * dk)).astype(dtype), H)
    k = split_heads(rng.standard_normal((B, Tk, H * dk)).astype(dtype), H)
    v = split_heads(rng.standard_normal((B, Tk, H * dk)).astype(dtype), H)
    return q, k, v


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bhqk", [(3, 2, 13, 11), (5, 3, 1, 9), (1, 3, 7, 7), (3, 1, 6, 4), (2, 5, 6, 5),
                                  (7, 4, 32, 32)])
@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_split_attention_equals_the_plain_core(dtype, bhqk, threads, split_small):
    B, H, Tq, Tk = bhqk
    q, k, v = _qkv(B, H, Tq, Tk, 8, dtype)
    q[0, 0, 0, 1] = np.nan                                         # a NaN score row
    k[-1, -1, 0, 0] = np.inf                                       # an inf score column
    for keep in _masks(B, H, Tq, Tk):
        split_small.clear()
        got = hs.split_attention(q, k, v, keep, threads)
        assert got is not None and split_small and min(split_small) >= 2, "not split"
        w0, _ = pat.attention_weights_forward(q, k, keep)
        weights, merged = got
        same(weights, w0, "weights")
        same(merged, merge_heads(w0 @ v), "merged P V")


def test_split_attention_declines_what_it_does_not_split():
    q, k, v = _qkv(2, 2, 4, 4, 8, "float32")
    assert hs.split_attention(q, k, v, None, 1) is None                        # one thread
    assert hs.split_attention(q, k, v, None, 2) is None                        # too little work
    big = _qkv(2, 1, 128, 128, 64, "float32")                                  # BLAS threads it
    assert 128 * 128 * 64 > hs.SINGLE_THREAD_PRODUCT
    assert hs.split_attention(*big, None, 2) is None
    one = _qkv(1, 1, 64, 64, 64, "float32")                                    # nothing to cut
    assert hs.split_attention(*one, None, 2) is None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("mode, p", [("eval", 0.2), ("train", 0.0), ("train", 0.2)])
@pytest.mark.parametrize("cross", [False, True])
def test_split_attention_module_equals_the_plain_module(dtype, threads, mode, p, cross,
                                                        split_small):
    """Split in eval mode; a training-mode forward (dropout active or not) keeps the unsplit path."""
    D, H, B, Tq = 32, 4, 5, 11
    Tk = 7 if cross else Tq
    plain = MultiHeadAttention(D, H, dropout=p, dtype=dtype, rng=np.random.default_rng(2))
    plain.attn_dropout.rng = np.random.default_rng(9)
    fast = accelerate(copy.deepcopy(plain), threads)
    rng = np.random.default_rng(3)
    query = rng.standard_normal((B, Tq, D)).astype(dtype)
    kv = query if not cross else rng.standard_normal((B, Tk, D)).astype(dtype)
    mask = np.tril(np.ones((Tq, Tk), dtype=bool)) if not cross else rng.random((B, 1, 1, Tk)) > 0.3
    dout = rng.standard_normal((B, Tq, D)).astype(dtype)
    for m in (plain, fast):
        getattr(m, mode)()
        m.zero_grad()
    y0 = plain(query, kv, kv, mask)
    split_small.clear()
    y1 = fast(query, kv, kv, mask)
    active = fast.attn_dropout.active
    assert active == (mode == "train" and p > 0)
    if mode == "train":
        assert not split_small, "split in training mode"
    else:
        assert split_small and min(split_small) >= 2, "not split"
    same(y1, y0, "output")
    same(fast.attn_weights, plain.attn_weights, "attn_weights")
    if active:
        same(fast.attn_dropout.last_mask, plain.attn_dropout.last_mask, "dropout mask")
    else:
        assert fast.attn_dropout.last_mask is None
    assert fast.attn_dropout.rng.random() == plain.attn_dropout.rng.random()   # same draws used
    for i, (g1, g0) in enumerate(zip(fast.backward(dout), plain.backward(dout))):
        same(g1, g0, ("dquery", "dkey", "dvalue")[i])
    for (name, p0), (_, p1) in zip(plain.named_parameters(), fast.named_parameters()):
        same(p1.grad, p0.grad, f"{name}.grad")


@pytest.mark.parametrize("kind", ["paper", "gpt2"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows, threads", [(1, 2), (3, 2), (5, 3)])
def test_an_eval_forward_of_a_whole_model_equals_the_plain_one(kind, dtype, rows, threads,
                                                               split_small):
    """Whole models in eval mode (the masks they build: padding, causal, both), split."""
    V = 31
    common = dict(vocab_size=V, d_model=16, num_heads=4, d_ff=40, num_encoder_layers=2,
                  num_decoder_layers=2, max_len=32, dropout=0.1, attention_dropout=0.2,
                  dtype=dtype, pad_id=0)
    if kind == "gpt2":
        cfg = TransformerConfig(**common, norm_first=True, final_norm=True, positional="learned",
                                scale_embeddings=False, tie_embeddings=True)
        make = CausalLM
    else:
        cfg, make = TransformerConfig(**common), Transformer
    plain = make(cfg, seed=3).eval()
    fast = accelerate(make(cfg, seed=3), threads).eval()
    rng = np.random.default_rng(0)
    src, tgt = rng.integers(1, V, (rows, 7)), rng.integers(1, V, (rows, 9))
    src[-1, -2:] = 0                                               # padding in the source
    if kind == "gpt2":
        y0, y1 = plain(tgt), fast(tgt)
    else:
        y0, y1 = plain(src, tgt), fast(src, tgt)
    assert split_small and min(split_small) >= 2, "not split"
    same(y1, y0, "logits")
