"""The twins' clipping and warm-up schedule against each other and against torch's own
clip_grad_norm_ / LambdaLR, at the exact edges: a norm exactly at max_norm, max_norm 0, float32
gradients whose norm overflows, the schedule's peak step."""
import math

import numpy as np
import pytest
import torch

from npformer.layers.module import Parameter
from npformer.optim import SGD as NPSGD
from npformer.optim import WarmupSchedule as NPWarmup
from npformer.optim import clip_grad_norm as np_clip
from torchformer.optim.clip import clip_grad_norm
from torchformer.optim.schedule import WarmupSchedule, portable_schedule_state

CASES = [  # (gradients, max_norm, norm_type)
    ([[3.0, 4.0]], 5.0, 2.0),                      # exactly at the threshold
    ([[3.0, 4.0]], 5.0 + 1e-6, 2.0),               # coef exactly 1
    ([[3.0, -4.0], [12.0]], 0.0, 2.0),             # everything to zero
    ([[3.0, -4.0], [12.0]], 19.0, 1.0),            # L1 at the threshold
    ([[3.0, -4.0], [12.0]], 12.0, math.inf),       # Linf at the threshold
    ([[1e-30, -2e-30]], 1e-31, 2.0),               # tiny norms
]


@pytest.mark.parametrize("grads, max_norm, norm_type", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_twins_clip_like_torch_bit_for_bit(grads, max_norm, norm_type, dtype):
    nps, ref, tws = [], [], []
    for g in grads:
        p = Parameter(np.zeros(len(g), dtype=dtype))
        p.grad[...] = np.asarray(g, dtype=dtype)
        nps.append(p)
        for lst in (ref, tws):
            t = torch.zeros(len(g), dtype=getattr(torch, dtype), requires_grad=True)
            t.grad = torch.tensor(g, dtype=getattr(torch, dtype))
            lst.append(t)
    n_np = np_clip(nps, max_norm, norm_type)
    n_tf = clip_grad_norm(tws, max_norm, norm_type)
    n_ref = float(torch.nn.utils.clip_grad_norm_(ref, max_norm, norm_type))
    assert n_np == pytest.approx(n_ref, rel=1e-6 if dtype == "float32" else 1e-15)
    assert n_tf == n_ref
    for p, t, r in zip(nps, tws, ref):
        assert p.grad.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(t.grad.numpy(), r.grad.numpy())
        np.testing.assert_allclose(p.grad, r.grad.numpy(), rtol=1e-6 if dtype == "float32"
                                   else 1e-15, atol=0)


def test_float32_norm_overflow_is_inf_in_both_twins_as_in_torch():
    g = [3e19, 4e19]                                       # the squares overflow float32
    p = Parameter(np.zeros(2, dtype=np.float32))
    p.grad[...] = g
    t = torch.zeros(2, requires_grad=True)
    t.grad = torch.tensor(g)
    with np.errstate(over="ignore"):
        assert np_clip([p], 1.0) == math.inf == clip_grad_norm([t], 1.0)
    assert p.grad.tolist() == t.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("warmup", [1, 3, 10])
def test_twin_schedules_set_the_same_rates_around_the_peak(warmup):
    np_opt = NPSGD([Parameter(np.zeros(1))], lr=5.0)
    np_s = NPWarmup(np_opt, d_model=32, warmup_steps=warmup, factor=1.5)
    tf_opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=5.0)
    tf_s = WarmupSchedule(tf_opt, d_model=32, warmup_steps=warmup, factor=1.5)
    np_rates, tf_rates = [np_opt.lr], [tf_opt.param_groups[0]["lr"]]
    for _ in range(2 * warmup + 2):
        tf_opt.step()
        np_s.step()
        tf_s.step()
        np_rates.append(np_opt.lr)
        tf_rates.append(tf_opt.param_groups[0]["lr"])
    assert np_rates == tf_rates
    assert int(np.argmax(tf_rates)) == warmup - 1              # the optimizer's step `warmup`
    assert tf_rates[warmup - 1] == pytest.approx(1.5 * (32 * warmup) ** -0.5, rel=1e-15)
    assert portable_schedule_state(tf_s) == np_s.state_dict()
