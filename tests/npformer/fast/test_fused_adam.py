"""npformer.fast.fused_adam (one-pass Adam/AdamW with clipping fused in) against clip_grad_norm and
the plain npformer.optim.adam: bit-equal."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.fast import adam as fast_adam
from npformer.fast.fused_adam import FusedAdam, FusedAdamW, clip_coefficient
from npformer.layers.module import Parameter
from npformer.optim import Adam, AdamW, clip_grad_norm

SHAPES = [(7, 5), (11,), (3, 4, 2), (1,), (1, 1), (13, 3)]   # no block or thread count divides them
NAMES = "abcdef"


def _params(init):
    return [Parameter(a.copy()) for a in init]


def run_plain(cls, kw, init, grads, max_norm):
    ps = _params(init)
    opt = cls(list(zip(NAMES, ps)), **kw)
    norms = []
    for g in grads:
        for p, gp in zip(ps, g):
            p.grad = gp.copy()
        if max_norm is not None:
            norms.append(clip_grad_norm(ps, max_norm))
        opt.step()
    return ps, opt, norms


def run_fused(cls, kw, init, grads, max_norm, threads, block, fortran_first=False):
    ps = _params(init)
    opt = cls(list(zip(NAMES, ps)), threads=threads, **kw)
    opt.BLOCK = opt.BLOCK_THREADED = block                      # small blocks: many per parameter
    opt.MIN_THREADED = 0                                        # threads even for this little work
    norms = []
    for g in grads:
        for p, gp in zip(ps, g):
            p.grad = gp.copy()
        if fortran_first:
            ps[0].grad = np.asfortranarray(ps[0].grad)          # non-contiguous: a whole-array job
        if max_norm is None:
            opt.step()
        else:
            total, coef = clip_coefficient(list(zip(NAMES, ps)), max_norm)
            norms.append(total)
            opt.step(grad_scale=coef)
    return ps, opt, norms


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("plain, fused, kw", [
    (Adam, FusedAdam, dict(lr=0.01)),
    (Adam, FusedAdam, dict(lr=0.01, weight_decay=0.1)),                       # L2 term
    (Adam, FusedAdam, dict(lr=0.02, betas=(0.3, 0.9), amsgrad=True)),         # lerp's other branch
    (AdamW, FusedAdamW, dict(lr=0.01)),                                        # decoupled decay
    (AdamW, FusedAdamW, dict(lr=0.01, weight_decay=0.0, amsgrad=True)),
])
@pytest.mark.parametrize("max_norm", [None, 0.5, 1e6])          # no clip; coef < 1; coef == 1
@pytest.mark.parametrize("threads, block", [(1, 10 ** 9), (1, 4), (3, 5), (2, 1)])
def test_fused_step_equals_clip_then_plain_step_bit_for_bit(dtype, plain, fused, kw, max_norm,
                                                            threads, block):
    rng = np.random.default_rng(7)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(4)]
    want, plain_opt, want_norms = run_plain(plain, kw, init, grads, max_norm)
    got, opt, norms = run_fused(fused, kw, init, grads, max_norm, threads, block,
                                fortran_first=block == 5)
    for a, b in zip(want, got):
        assert a.data.dtype == b.data.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(a.data, b.data)
        np.testing.assert_array_equal(a.grad, b.grad)           # .grad clipped in place, as clip's
    assert norms == want_norms                                  # the same norms, bit for bit
    assert not np.array_equal(got[1].data, init[1])             # the parameters did move
    for name in NAMES:                                          # and so did the moments
        for k, val in plain_opt.state[name].items():
            np.testing.assert_array_equal(val, opt.state[name][k])
    if threads > 1:
        assert threads in fast_adam._POOLS                      # the threaded path really ran
    assert opt.state_dict()["type"] == plain.__name__


@pytest.mark.parametrize("fused, plain", [(FusedAdam, Adam), (FusedAdamW, AdamW)])
def test_fused_state_saves_and_loads_into_either_rule(fused, plain):
    """State written mid-training by the fused step continues, bit for bit, in the plain step and
    in a fresh fused one."""
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(4)]
    ps, opt, _ = run_fused(fused, dict(lr=0.05), init, grads[:2], 0.3, 2, 3)
    sd = opt.state_dict()
    ends = []
    for make in (lambda q: plain(q, lr=0.05), lambda q: fused(q, lr=0.05, threads=1)):
        qs = [Parameter(p.data.copy()) for p in ps]
        o = make(list(zip(NAMES, qs)))
        o.load_state_dict(sd)
        for g in grads[2:]:
            for q, gq in zip(qs, g):
                q.grad = gq.copy()
            o.step()
        ends.append(qs)
    for a, b in zip(*ends):
        np.testing.assert_array_equal(a.data, b.data)
    assert sd["state"]["a"]["step"] == 2


def test_clip_coefficient_is_clip_grad_norms_norm_and_scale():
    rng = np.random.default_rng(1)
    ps = [Parameter(np.zeros(s, np.float32)) for s in SHAPES]
    for p in ps:
        p.grad = rng.standard_normal(p.data.shape).astype(np.float32)
    total, coef = clip_coefficient(list(zip(NAMES, ps)), 0.25)
    before = [p.grad.copy() for p in ps]
    assert clip_grad_norm(ps, 0.25) == total
    for p, g in zip(ps, before):
        np.testing.assert_array_equal(p.grad, g * coef)
    assert 0 < coef < 1
    assert clip_coefficient(list(zip(NAMES, ps)), None)[1] == 1.0


@pytest.mark.parametrize("bad", [-0.5, float("nan"), float("inf"), "1"])
def test_grad_scale_must_be_a_finite_float(bad):
    p = Parameter(np.zeros(3))
    p.grad = np.ones(3)
    with pytest.raises(ValueError, match="grad_scale"):
        FusedAdam([p]).step(grad_scale=bad)
    np.testing.assert_array_equal(p.data, 0.0)                  # nothing was updated


@pytest.mark.parametrize("plain, fused", [(Adam, FusedAdam), (AdamW, FusedAdamW)])
def test_equal_after_the_bias_correction_rounds_to_one(plain, fused):
    """beta2 = 0.5: sqrt(1 - beta2^t) is exactly 1.0 in float64 from t = 53 on, where the fused step skips
    dividing by its root; 60 steps stay bit-equal."""
    rng = np.random.default_rng(11)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(60)]
    kw = dict(lr=0.01, betas=(0.5, 0.5))
    assert (1 - 0.5 ** 53) ** 0.5 == 1.0 and (1 - 0.5 ** 52) ** 0.5 != 1.0
    want, _, _ = run_plain(plain, kw, init, grads, 1.0)
    got, _, _ = run_fused(fused, kw, init, grads, 1.0, 1, 4)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a.data, b.data)
