"""torchformer (torch.optim's SGD, Adam, AdamW under npformer's names): a learning rate of 0 moves no
weight of a torchformer model after a real backward, while the optimizer's state advances as at any
rate. Weights compared bit for bit; the state after one step bit for bit with a run at another rate."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import torchformer as tf
from tests.npformer.model_invariants import configs, model_settings

OPTIMIZERS = {
    "SGD": lambda ps, lr: tf.SGD(ps, lr=lr, momentum=0.9, weight_decay=0.1, nesterov=True),
    "Adam": lambda ps, lr: tf.Adam(ps, lr=lr, weight_decay=0.1, amsgrad=True),
    "AdamW": lambda ps, lr: tf.AdamW(ps, lr=lr, weight_decay=0.1),
}


def step(model, opt, ids, seed):
    opt.zero_grad()
    out = model(ids)
    g = torch.from_numpy(np.random.default_rng(seed).standard_normal(tuple(out.shape)))
    out.backward(g.to(out.dtype))
    opt.step()


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
@model_settings()
@given(data=st.data(), seed=st.integers(0, 99))
def test_a_zero_learning_rate_moves_no_weight_and_still_advances_the_state(kind, data, seed):
    config = data.draw(configs())
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (2, 4))
    frozen, moving = (tf.CausalLM(config, seed=seed).train() for _ in range(2))
    before = {n: p.detach().clone() for n, p in frozen.named_parameters()}
    opt0, opt1 = OPTIMIZERS[kind](frozen.parameters(), 0.0), OPTIMIZERS[kind](moving.parameters(), 0.1)
    step(frozen, opt0, ids, seed)
    step(moving, opt1, ids, seed)
    for (n, p0), p1 in zip(frozen.named_parameters(), moving.parameters()):
        for k, v in opt0.state[p0].items():
            torch.testing.assert_close(v, opt1.state[p1][k], rtol=0, atol=0, msg=f"{kind} {n} {k}")
    assert any(not torch.equal(p, before[n]) for n, p in moving.named_parameters())
    step(frozen, opt0, ids, seed + 1)
    for n, p in frozen.named_parameters():
        assert torch.equal(p.detach(), before[n]), f"{kind}: lr 0 moved {n}"
    assert any(torch.any(v != 0) for s in opt0.state.values() for v in s.values() if v.dim())
