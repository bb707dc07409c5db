"""npformer.fast.grad_in_place: Linear's and Embedding's gradients written into `.grad` give the
plain methods' gradients and, through FusedAdam, the plain training step's weights, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.fast.accelerate import accelerate
from npformer.fast.fused_adam import FusedAdam
from npformer.fast.grad_in_place import gradient_array
from npformer.fast.lazy_grad import LazyZeroParameter, lazy_zero_grad
from npformer.layers.embedding import Embedding
from npformer.layers.linear import Linear
from npformer.layers.loss import CrossEntropyLoss
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.optim import Adam


def twins(make):
    """(plain module with plain Parameters, accelerated module with LazyZeroParameters)."""
    plain, fast = make(), make()
    accelerate(fast, 1)
    lazy_zero_grad(fast.named_parameters())
    return plain, fast


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lead", [(1,), (7,), (2, 3), (3, 1, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_backward_writes_the_plain_gradient_into_grad(dtype, lead, bias):
    rng = np.random.default_rng(0)
    plain, fast = twins(lambda: Linear(13, 11, bias=bias, dtype=dtype, rng=np.random.default_rng(1)))
    for step in range(3):                                      # zero_grad marks; 2nd step in place
        plain.zero_grad()
        fast.zero_grad()
        x = rng.standard_normal(lead + (13,)).astype(dtype)
        dout = rng.standard_normal(lead + (11,)).astype(dtype)
        held = fast.weight.__dict__["grad"]
        plain(x)
        fast(x)
        np.testing.assert_array_equal(fast.backward(dout), plain.backward(dout))
        np.testing.assert_array_equal(fast.weight.grad, plain.weight.grad)
        assert fast.weight.grad.dtype == plain.weight.grad.dtype
        if step:
            assert fast.weight.__dict__["grad"] is held            # written in place, no new array
        if bias:
            np.testing.assert_array_equal(fast.bias.grad, plain.bias.grad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scale,padding_idx", [(1.0, None), (2.5, 0), (1.0, 4)])
@pytest.mark.parametrize("ids_shape", [(1, 1), (3, 7)])
def test_embedding_backward_adds_the_plain_rows(dtype, scale, padding_idx, ids_shape):
    rng = np.random.default_rng(2)
    plain, fast = twins(lambda: Embedding(9, 6, padding_idx=padding_idx, scale=scale, dtype=dtype,
                                          rng=np.random.default_rng(3)))
    for step in range(3):
        plain.zero_grad()
        fast.zero_grad()
        ids = rng.integers(0, 5, size=ids_shape)               # repeated ids, the padding id among them
        dout = rng.standard_normal(ids_shape + (6,)).astype(dtype)
        if step == 2:                                          # a gradient already there: added to
            g0 = rng.standard_normal((9, 6)).astype(dtype)
            plain.weight.accumulate(g0)
            fast.weight.accumulate(g0)
        plain(ids)
        fast(ids)
        assert fast.backward(dout) is None and plain.backward(dout) is None
        np.testing.assert_array_equal(fast.weight.grad, plain.weight.grad)


def test_embedding_leaves_a_negative_zero_in_rows_it_did_not_look_up():
    """The one difference from the plain method (as LazyZeroParameter's): plain adds 0.0 there."""
    plain, fast = twins(lambda: Embedding(4, 2, dtype="float64", rng=np.random.default_rng(0)))
    for m in (plain, fast):
        m.zero_grad()
        m.weight.accumulate(np.full((4, 2), -0.0))
        m(np.array([[1]]))
        m.backward(np.ones((1, 1, 2)))
    np.testing.assert_array_equal(fast.weight.grad, plain.weight.grad)      # equal as numbers
    assert np.signbit(fast.weight.grad[0]).all() and not np.signbit(plain.weight.grad[0]).any()


def test_plain_parameters_and_a_gradient_set_to_none_take_the_plain_path():
    rng = np.random.default_rng(4)
    lin = Linear(5, 3, rng=np.random.default_rng(0))
    accelerate(lin, 1)                                         # plain Parameters: accumulate as before
    x, dout = rng.standard_normal((4, 5)), rng.standard_normal((4, 3))
    lin(x.astype("float32"))
    lin.backward(dout.astype("float32"))
    assert type(lin.weight) is not LazyZeroParameter and gradient_array(lin.weight, np.float32) is None
    lazy_zero_grad(lin.named_parameters())
    lin.weight.grad = None
    want = dout.astype("float32").T @ x.astype("float32")
    lin(x.astype("float32"))
    lin.backward(dout.astype("float32"))
    np.testing.assert_array_equal(lin.weight.grad, want)
    assert gradient_array(lin.weight, np.float64) is None      # another dtype: never written into


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows", [1, 3])
def test_a_tied_causal_lm_trains_as_the_plain_one_under_fused_adam(dtype, rows):
    cfg = TransformerConfig(vocab_size=23, d_model=16, num_heads=4, d_ff=24, num_encoder_layers=0,
                            num_decoder_layers=2, max_len=16, dropout=0.0, activation="gelu_tanh",
                            dtype=dtype, norm_first=True, final_norm=True, positional="learned",
                            scale_embeddings=False, tie_embeddings=True, pad_id=0)
    models = [CausalLM(cfg, seed=5), CausalLM(cfg, seed=5)]
    losses = [CrossEntropyLoss(ignore_index=0), CrossEntropyLoss(ignore_index=0)]
    accelerate(models[1], 3)                                   # 3 threads: rows no count divides
    accelerate(losses[1], 3)
    opts = [Adam(models[0].named_parameters(), lr=1e-2),
            FusedAdam(models[1].named_parameters(), lr=1e-2, threads=2)]
    rng = np.random.default_rng(6)
    for _ in range(3):
        ids = rng.integers(0, 23, size=(rows, 9))              # id 0 (padding) and repeats included
        for model, loss, opt in zip(models, losses, opts):
            model.train()
            model.zero_grad()
            loss(model(ids[:, :-1]), ids[:, 1:])
            model.backward(loss.backward())
            opt.step()
        for (name, a), (_, b) in zip(models[0].named_parameters(), models[1].named_parameters()):
            np.testing.assert_array_equal(b.grad, a.grad, err_msg=name)
            np.testing.assert_array_equal(b.data, a.data, err_msg=name)
