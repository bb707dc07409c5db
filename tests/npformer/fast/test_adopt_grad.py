"""npformer.fast.adopt_grad: gradients taken as `.grad` instead of copied give the same training,
bit for bit, and arrays that are not safe to own are still copied."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.fast.adopt_grad import AdoptingParameter, adopt_gradients, can_adopt
from npformer.fast.fused_adam import FusedAdam, clip_coefficient
from npformer.fast.lazy_grad import LazyZeroParameter
from npformer.layers.loss import CrossEntropyLoss
from npformer.layers.module import Parameter
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer
from npformer.optim import Adam, clip_grad_norm


def _model(kind: str, dtype: str):
    cfg = dict(vocab_size=13, max_len=16, d_model=8, num_heads=2, d_ff=12, dropout=0.0,
               tie_embeddings=True, dtype=dtype)
    if kind == "causal":
        return CausalLM(TransformerConfig(num_encoder_layers=0, num_decoder_layers=2, pad_id=None,
                                          **cfg), seed=3)
    return Transformer(TransformerConfig(num_encoder_layers=1, num_decoder_layers=1,
                                         share_embeddings=True, **cfg), seed=3)


def _train(model, kind: str, fused: bool, steps: int = 3):
    rng = np.random.default_rng(5)
    loss_fn = CrossEntropyLoss()
    params = list(model.named_parameters())
    opt = FusedAdam(params, lr=0.01, threads=2) if fused else Adam(params, lr=0.01)
    if fused:
        assert opt.adopt_gradients(True) == len(params)
    adopted = 0
    for _ in range(steps):
        src, tgt = rng.integers(3, 13, (3, 5)), rng.integers(3, 13, (3, 6))
        before = {n: p.grad for n, p in params}
        model.zero_grad()
        logits = model.forward(tgt) if kind == "causal" else model.forward(src, tgt)
        loss_fn.forward(logits, rng.integers(3, 13, tgt.shape))
        model.backward(loss_fn.backward())
        adopted += sum(p.grad is not before[n] for n, p in params)
        if fused:
            opt.step(grad_scale=clip_coefficient(params, 0.5)[1])
        else:
            clip_grad_norm(params, 0.5)
            opt.step()
    return model, adopted


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])              # both with tied embeddings
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adopted_gradients_train_the_same_bits(kind, dtype):
    plain, copied = _train(_model(kind, dtype), kind, fused=False)
    fast, adopted = _train(_model(kind, dtype), kind, fused=True)
    for (n, a), (_, b) in zip(plain.state_dict().items(), fast.state_dict().items()):
        np.testing.assert_array_equal(a, b, err_msg=n)
    assert copied == 0                                               # plain: .grad stays one array
    assert adopted > len(list(fast.named_parameters()))              # most were taken, not copied
    assert all(type(p) is AdoptingParameter for _, p in fast.named_parameters())


def test_arrays_that_are_not_safe_to_own_are_copied():
    p = Parameter(np.zeros((4, 3), np.float32))
    adopt_gradients([p])
    big = np.ones((8, 3), np.float32)
    cases = {"a view": big[:4], "float64": np.ones((4, 3)), "Fortran order": np.ones((3, 4), np.float32).T,
             "read-only": np.ones((4, 3), np.float32), "the data itself": p.data}
    cases["read-only"].flags.writeable = False
    for why, g in cases.items():
        p.zero_grad()
        assert not can_adopt(p, g), why
        p.accumulate(g)
        assert p.grad is not g, why
        np.testing.assert_array_equal(p.grad, np.asarray(g, np.float32), err_msg=why)
    shared = np.full((4, 3), 2.0, np.float32)
    kept = [shared]                                                  # a second holder: copied
    p.zero_grad()
    p.accumulate(shared)
    assert p.grad is not shared and kept[0] is shared
    p.accumulate(np.ones((4, 3), np.float32))                        # later uses add, as before
    np.testing.assert_array_equal(p.grad, 3.0)


def test_adoption_switches_off_again():
    ps = [Parameter(np.zeros(2)), Parameter(np.zeros(3))]
    assert adopt_gradients(ps, True) == 2 and adopt_gradients(ps, True) == 0
    assert adopt_gradients(list(zip("ab", ps)), False) == 2
    assert all(type(p) is LazyZeroParameter for p in ps)           # copying again, zeroed lazily
    g = np.ones(2)
    ps[0].zero_grad()
    ps[0].accumulate(g)
    assert ps[0].grad is not g and ps[0].grad.tolist() == [1.0, 1.0]
