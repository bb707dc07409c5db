"""npformer.fast.accelerate on whole models: a training step with the fast methods gives the plain
step's logits, loss, every gradient and, after Adam, every weight, bit for bit.

With `split_everything` every elementwise pass is split over the threads and cut into tiny blocks,
so the small models here take the threaded path. Models: the paper's post-norm Transformer (ReLU,
exact GELU) and a GPT-2-style CausalLM (pre-norm, GELU-tanh, tied embeddings), every dropout site
active, padding in the batch, float32 and float64, batches of 1 row and of rows no thread count
divides.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from npformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks
from npformer.fast.accelerate import FAST_METHODS, accelerate, accelerated_threads, restore_plain
from npformer.layers.loss import CrossEntropyLoss
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer
from npformer.optim import Adam

V = 31


def config(kind: str, dtype: str, activation: str) -> TransformerConfig:
    common = dict(vocab_size=V, d_model=16, num_heads=4, d_ff=40, num_encoder_layers=2,
                  num_decoder_layers=2, max_len=32, dropout=0.1, attention_dropout=0.2,
                  activation_dropout=0.1, activation=activation, dtype=dtype, pad_id=0)
    if kind == "gpt2":
        return TransformerConfig(**common, norm_first=True, final_norm=True, positional="learned",
                                 scale_embeddings=False, tie_embeddings=True)
    return TransformerConfig(**common)


def batch(kind: str, rows: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    T, S = 9, 7
    tgt_in = rng.integers(1, V, (rows, T))
    tgt_out = rng.integers(1, V, (rows, T))
    tgt_out[0, -2:] = 0                                            # padding: ignored targets
    src = rng.integers(1, V, (rows, S))
    src[-1, -1] = 0
    return (None if kind == "gpt2" else src), tgt_in, tgt_out


def make(kind: str, dtype: str, activation: str):
    cls = CausalLM if kind == "gpt2" else Transformer
    return cls(config(kind, dtype, activation), seed=3)


def train_step(model, loss_fn, opt, data):
    src, tgt_in, tgt_out = data
    model.train()
    model.zero_grad()
    logits = model(tgt_in) if src is None else model(src, tgt_in)
    loss = loss_fn(logits, tgt_out)
    model.backward(loss_fn.backward())
    grads = {n: p.grad.copy() for n, p in model.named_parameters()}
    opt.step()
    return logits, loss, grads


CASES = [("gpt2", "gelu_tanh"), ("paper", "relu"), ("paper", "gelu")]


@pytest.mark.parametrize("kind, activation", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows, threads", [(1, 2), (3, 2), (5, 3), (4, 1)])
def test_a_training_step_with_fast_methods_equals_the_plain_step(split_everything, kind,
                                                                 activation, dtype, rows,
                                                                 threads):
    plain, fast = make(kind, dtype, activation), make(kind, dtype, activation)
    accelerate(fast, threads)
    loss_plain = CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
    loss_fast = accelerate(CrossEntropyLoss(ignore_index=0, label_smoothing=0.1), threads)
    opt_plain = Adam(plain.named_parameters(), lr=1e-2)
    opt_fast = Adam(fast.named_parameters(), lr=1e-2)
    for step in range(2):                                          # the second after an update
        data = batch(kind, rows, seed=step)
        split_everything.clear()
        l0, loss0, g0 = train_step(plain, loss_plain, opt_plain, data)
        assert split_everything == []                              # the plain model never splits
        l1, loss1, g1 = train_step(fast, loss_fast, opt_fast, data)
        if threads > 1:
            assert max(split_everything) > 1                       # the fast path ran, threaded
        np.testing.assert_array_equal(l1, l0)
        assert l1.dtype == l0.dtype and loss1.dtype == loss0.dtype
        assert float(loss1) == float(loss0)
        assert g1.keys() == g0.keys()
        for name in g0:
            np.testing.assert_array_equal(g1[name], g0[name], err_msg=name)
        for m0, m1 in zip(collect_dropout_masks(plain).values(),
                          collect_dropout_masks(fast).values()):
            np.testing.assert_array_equal(m1, m0)                  # the same masks were drawn
    for (name, p0), (_, p1) in zip(plain.named_parameters(), fast.named_parameters()):
        np.testing.assert_array_equal(p1.data, p0.data, err_msg=name)


def test_accelerate_binds_fast_methods_to_every_elementwise_module_and_restore_plain_removes_them():
    model = make("gpt2", "float32", "gelu_tanh")
    kinds = {type(m) for _, m in model.named_modules()}
    assert set(FAST_METHODS) - {CrossEntropyLoss} <= kinds          # each kind is present here
    assert accelerated_threads(model) is None
    accelerate(model, 2)
    assert accelerated_threads(model) == 2
    for _, m in model.named_modules():
        if type(m) in FAST_METHODS:
            assert m.forward.__func__ is FAST_METHODS[type(m)][0]
            assert m.backward.__func__ is FAST_METHODS[type(m)][1]
    other = make("gpt2", "float32", "gelu_tanh")                     # another instance: untouched
    assert accelerated_threads(other) is None
    restore_plain(model)
    assert accelerated_threads(model) is None
    assert all("forward" not in m.__dict__ for _, m in model.named_modules())


def test_a_deep_copy_keeps_the_fast_methods_bound_to_the_copy():
    model = accelerate(make("gpt2", "float32", "gelu_tanh"), 2)
    twin = copy.deepcopy(model)
    norm = twin.decoder.layers[0].norm1
    assert norm.forward.__self__ is norm                           # bound to the copy, not model
    assert accelerated_threads(twin) == 2


def test_a_second_backward_after_one_forward_raises_as_in_the_plain_module():
    model = accelerate(make("gpt2", "float64", "gelu_tanh"), 2)
    ln = model.decoder.layers[0].norm1
    x = np.random.default_rng(0).standard_normal((2, 3, 16))
    ln(x)
    ln.backward(np.ones((2, 3, 16)))
    with pytest.raises(RuntimeError, match="second time"):
        ln.backward(np.ones((2, 3, 16)))


def test_replayed_dropout_masks_and_incremental_decoding_give_the_plain_results(split_everything):
    plain, fast = make("gpt2", "float64", "gelu_tanh"), make("gpt2", "float64", "gelu_tanh")
    accelerate(fast, 2)
    ids = np.random.default_rng(1).integers(1, V, (3, 6))
    plain.train()
    fast.train()
    plain(ids)
    masks = collect_dropout_masks(plain)
    replay_dropout_masks(fast, masks)                              # replayed, not drawn
    replay_dropout_masks(plain, masks)
    np.testing.assert_array_equal(fast(ids), plain(ids))
    plain.eval()
    fast.eval()
    c0 = [{} for _ in range(2)]
    c1 = [{} for _ in range(2)]
    np.testing.assert_array_equal(fast(ids[:, :4], caches=c1), plain(ids[:, :4], caches=c0))
    np.testing.assert_array_equal(fast(ids[:, 4:5], caches=c1, offset=4),
                                  plain(ids[:, 4:5], caches=c0, offset=4))


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_accelerate_refuses_a_bad_thread_count(threads):
    with pytest.raises(ValueError, match="threads: expected a positive int"):
        accelerate(make("paper", "float32", "relu"), threads)


def test_accelerate_refuses_what_is_not_a_module():
    with pytest.raises(TypeError, match="module: expected an npformer Module"):
        accelerate(object(), 2)


def test_fast_modules_refuse_bad_input_as_the_plain_ones_do():
    model = accelerate(make("paper", "float32", "relu"), 2)
    ln = model.encoder.layers[0].norm1
    with pytest.raises(ValueError, match="expected last dimension 16"):
        ln(np.zeros((2, 3, 5), dtype=np.float32))
    loss = accelerate(CrossEntropyLoss(), 2)
    with pytest.raises(ValueError, match="targets: expected shape"):
        loss(np.zeros((2, 3, 4), dtype=np.float32), np.zeros((2, 2), dtype=np.int64))
