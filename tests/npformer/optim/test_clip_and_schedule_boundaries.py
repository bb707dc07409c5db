"""Gradient clipping and the warm-up schedule at the exact edges of their rules: a norm exactly at
max_norm, max_norm 0, float32 gradients at the top of their range; the schedule on both sides of
its peak. Expected values are written out by hand."""
import numpy as np
import pytest

from npformer.layers.module import Parameter
from npformer.optim import SGD, WarmupSchedule, clip_grad_norm, warmup_lr


def _param(grad, dtype=np.float64) -> Parameter:
    p = Parameter(np.zeros(len(grad), dtype=dtype))
    p.grad[...] = np.asarray(grad, dtype=dtype)
    return p


def test_a_norm_exactly_at_max_norm_is_still_scaled_by_the_epsilon_rule():
    """torch's rule: coef = min(max_norm / (N + 1e-6), 1) applied always; at N == max_norm the
    gradients shrink by 5 / (5 + 1e-6) (a rule that only clips above max_norm leaves them)."""
    p = _param([3.0, 4.0])                                     # N = 5
    assert clip_grad_norm([p], max_norm=5.0) == 5.0
    coef = 5.0 / (5.0 + 1e-6)
    assert p.grad.tolist() == [3.0 * coef, 4.0 * coef]
    assert p.grad[1] < 4.0


def test_max_norm_equal_to_the_norm_plus_epsilon_leaves_gradients_bit_identical():
    p = _param([3.0, 4.0])
    clip_grad_norm([p], max_norm=5.0 + 1e-6)                  # coef = 1 exactly
    assert p.grad.tolist() == [3.0, 4.0]


def test_max_norm_zero_zeroes_every_gradient():
    p, q = _param([3.0, -4.0]), _param([1e-3])
    assert clip_grad_norm([p, q], max_norm=0.0) == pytest.approx(np.sqrt(25 + 1e-6), rel=1e-15)
    assert p.grad.tolist() == [0.0, 0.0] and q.grad.tolist() == [0.0]


@pytest.mark.parametrize("norm_type", [1.0, 2.0, float("inf")])
def test_every_norm_type_over_several_tensors(norm_type):
    """grads [3, -4] and [12]: L1 = 3 + 4 + 12 = 19; L2 = sqrt(9 + 16 + 144) = 13; Linf = 12."""
    want = {1.0: 19.0, 2.0: 13.0, float("inf"): 12.0}[norm_type]
    p, q = _param([3.0, -4.0]), _param([12.0])
    assert clip_grad_norm([p, q], max_norm=1.0, norm_type=norm_type) == pytest.approx(want,
                                                                                        rel=1e-15)
    coef = 1.0 / (want + 1e-6)
    np.testing.assert_allclose(np.concatenate([p.grad, q.grad]), np.array([3, -4, 12]) * coef,
                               rtol=1e-15)


def test_an_empty_gradient_counts_zero_and_a_missing_one_is_skipped():
    p, q = _param([]), _param([6.0, 8.0])
    r = Parameter(np.zeros(3))
    r.grad = None
    assert clip_grad_norm([p, q, r], max_norm=100.0) == 10.0
    assert q.grad.tolist() == [6.0, 8.0]


def test_float32_gradients_at_the_top_of_their_range_stay_float32():
    """A norm beyond float32's range is inf (as torch: norms are taken in the gradient's dtype),
    the coefficient 0; below it the float32 result is the float64 one rounded."""
    p = _param([3e19, 4e19], np.float32)                      # N = 5e19: its squares overflow
    with np.errstate(over="ignore"):                            # ... in float32 (> 3.4e38)
        total = clip_grad_norm([p], max_norm=1.0)
    assert p.grad.dtype == np.float32
    assert total == np.inf and p.grad.tolist() == [0.0, 0.0]
    p = _param([3e15, 4e15], np.float32)                      # squares 1.6e31: representable
    total = clip_grad_norm([p], max_norm=1.0)
    assert total == pytest.approx(5e15, rel=1e-6)
    np.testing.assert_allclose(p.grad, [0.6, 0.8], rtol=1e-6)


# -- the warm-up schedule --------------------------------------------------------------------------
@pytest.mark.parametrize("warmup", [1, 2, 7, 4000])
def test_the_rate_rises_linearly_to_step_warmup_then_decays_as_the_inverse_root(warmup):
    d = 64
    peak = d ** -0.5 * warmup ** -0.5
    assert warmup_lr(warmup, d, warmup) == pytest.approx(peak, rel=1e-15)
    if warmup > 1:                                            # the warm-up branch, one step before
        assert warmup_lr(warmup - 1, d, warmup) == pytest.approx(
            d ** -0.5 * (warmup - 1) * warmup ** -1.5, rel=1e-15)
        assert warmup_lr(warmup - 1, d, warmup) < warmup_lr(warmup, d, warmup)
    # the decay branch, one step after
    assert warmup_lr(warmup + 1, d, warmup) == pytest.approx(d ** -0.5 * (warmup + 1) ** -0.5,
                                                             rel=1e-15)
    assert warmup_lr(warmup + 1, d, warmup) < warmup_lr(warmup, d, warmup)
    rates = [warmup_lr(s, d, warmup) for s in range(1, 2 * warmup + 3)]
    assert int(np.argmax(rates)) + 1 == warmup                # the peak is step `warmup` itself


def test_step_zero_is_step_one_and_warmup_one_starts_at_the_peak():
    assert warmup_lr(0, 16, 5) == warmup_lr(1, 16, 5) == pytest.approx(0.25 * 5 ** -1.5, rel=1e-15)
    assert warmup_lr(1, 16, 1) == 0.25 and warmup_lr(4, 16, 1) == 0.125


def test_the_schedule_object_reaches_the_peak_after_warmup_minus_one_steps():
    """Construction sets the rate of step 1; after k step() calls the rate is that of step k + 1,
    so the optimizer's step number `warmup` runs at the peak."""
    opt = SGD([_param([0.0])], lr=99.0)
    sched = WarmupSchedule(opt, d_model=16, warmup_steps=3, factor=2.0)
    seen = [opt.lr]
    for _ in range(4):
        sched.step()
        seen.append(opt.lr)
    want = [2 * 0.25 * s * 3 ** -1.5 for s in (1, 2, 3)] + [2 * 0.25 * s ** -0.5 for s in (4, 5)]
    np.testing.assert_allclose(seen, want, rtol=1e-15)
    assert int(np.argmax(seen)) == 2
