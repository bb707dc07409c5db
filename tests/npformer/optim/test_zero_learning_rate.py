"""A learning rate of 0 moves no weight, while the optimizer's state advances as with any rate:
SGD (momentum, Nesterov, weight decay), Adam (L2 decay, AMSGrad), AdamW, and npformer.fast's
blocked / fused Adam and AdamW (threads, a folded clipping scale). Random gradients over random
shapes; weights compared bit for bit; the state after one step compared bit for bit with a run at
another rate (the moments never read the rate)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npformer.fast.adam import BlockedAdam, BlockedAdamW
from npformer.fast.fused_adam import FusedAdam, FusedAdamW
from npformer.layers.module import Parameter
from npformer.optim import SGD, Adam, AdamW
from tests.npformer.model_invariants import model_settings

OPTIMIZERS = {
    "SGD": lambda ps, lr: SGD(ps, lr=lr, momentum=0.9, weight_decay=0.1, nesterov=True),
    "SGD-dampened": lambda ps, lr: SGD(ps, lr=lr, momentum=0.5, dampening=0.3, weight_decay=0.2),
    "Adam": lambda ps, lr: Adam(ps, lr=lr, weight_decay=0.1),
    "Adam-amsgrad": lambda ps, lr: Adam(ps, lr=lr, amsgrad=True),
    "AdamW": lambda ps, lr: AdamW(ps, lr=lr, weight_decay=0.1),
    "BlockedAdam": lambda ps, lr: BlockedAdam(ps, lr=lr, weight_decay=0.1),
    "BlockedAdamW": lambda ps, lr: BlockedAdamW(ps, lr=lr, weight_decay=0.1, amsgrad=True),
    "FusedAdam": lambda ps, lr: FusedAdam(ps, lr=lr, weight_decay=0.1, threads=2),
    "FusedAdamW": lambda ps, lr: FusedAdamW(ps, lr=lr, weight_decay=0.1, threads=2),
}
SHAPES = st.lists(st.tuples(st.integers(1, 5), st.integers(1, 70)), min_size=1, max_size=3)


def params(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [(f"p{i}", Parameter(rng.standard_normal(s).astype(dtype))) for i, s in enumerate(shapes)]


def set_grads(named, seed):
    rng = np.random.default_rng(seed)
    for _, p in named:
        p.grad[...] = rng.standard_normal(p.data.shape).astype(p.data.dtype)


def state_arrays(opt):
    return {(n, k): np.array(v) for n, s in opt.state.items() for k, v in s.items()}


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
@model_settings()
@given(shapes=SHAPES, dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 99))
def test_a_zero_learning_rate_moves_no_weight_and_still_advances_the_state(kind, shapes, dtype, seed):
    frozen, moving = params(shapes, dtype, seed), params(shapes, dtype, seed)
    before = [p.data.copy() for _, p in frozen]
    opt0, opt1 = OPTIMIZERS[kind](frozen, 0.0), OPTIMIZERS[kind](moving, 0.1)
    for step in range(3):
        set_grads(frozen, seed + step)
        set_grads(moving, seed + step)
        scale = 0.5 if kind.startswith("Fused") and step == 1 else None
        for opt in (opt0, opt1):
            opt.step(scale) if scale is not None else opt.step()
        if step == 0:       # same gradients, one step: the state does not depend on the rate
            s0, s1 = state_arrays(opt0), state_arrays(opt1)
            assert s0.keys() == s1.keys() and s0, f"{kind}: state keys {sorted(s0)}"
            for key in s0:
                np.testing.assert_array_equal(s0[key], s1[key], err_msg=f"{kind} state {key}")
            moved = [not np.array_equal(p.data, b) for (_, p), b in zip(moving, before)]
            assert any(moved), f"{kind}: lr 0.1 moved no weight (the test would prove nothing)"
    for (name, p), b in zip(frozen, before):
        np.testing.assert_array_equal(p.data, b, err_msg=f"{kind}: lr 0 moved {name}")
        assert p.data.dtype == b.dtype
    nonzero = [k for k, v in state_arrays(opt0).items() if v.ndim and np.any(v)]
    assert nonzero, f"{kind}: lr 0 left the optimizer's state at zero"
