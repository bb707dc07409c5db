"""npformer.optim on its own: hand-computed updates, invariants, state round trips and bad input.

The comparison with torch.optim itself (random hyper-parameters, several steps) is in
parity_tests/test_optim_parity.py; here every expected number is worked out by hand in a comment.
"""
import math

import numpy as np
import pytest

from npformer.layers.module import Module, Parameter
from npformer.optim import SGD, Adam, AdamW, WarmupSchedule, clip_grad_norm, warmup_lr


def param(values, dtype=np.float64) -> Parameter:
    return Parameter(np.array(values, dtype=dtype))


def set_grad(p: Parameter, values) -> None:
    p.grad[...] = np.asarray(values, dtype=p.data.dtype)


# -- SGD ----------------------------------------------------------------------------------------------
def test_sgd_plain_step():
    # theta = [1, -2], g = [0.5, 4], lr 0.1: theta - 0.1 g = [0.95, -2.4]
    p = param([1.0, -2.0])
    opt = SGD([p], lr=0.1)
    set_grad(p, [0.5, 4.0])
    opt.step()
    np.testing.assert_allclose(p.data, [0.95, -2.4], rtol=0, atol=1e-15)
    assert opt.state["0"] == {}          # no momentum: no state, as torch


def test_sgd_momentum_first_buffer_is_the_gradient():
    # mu 0.9, tau 0.5, lr 0.1, g = 0.5 twice, theta0 = 1.
    # step 1: b1 = g = 0.5 (dampening NOT applied on the first step); theta1 = 1 - 0.05 = 0.95
    # step 2: b2 = 0.9*0.5 + (1-0.5)*0.5 = 0.7; theta2 = 0.95 - 0.07 = 0.88
    p = param([1.0])
    opt = SGD([("w", p)], lr=0.1, momentum=0.9, dampening=0.5)
    set_grad(p, [0.5])
    opt.step()
    np.testing.assert_allclose(p.data, [0.95], atol=1e-15)
    np.testing.assert_allclose(opt.state["w"]["momentum_buffer"], [0.5], atol=1e-15)
    opt.step()
    np.testing.assert_allclose(opt.state["w"]["momentum_buffer"], [0.7], atol=1e-15)
    np.testing.assert_allclose(p.data, [0.88], atol=1e-15)


def test_sgd_nesterov_and_weight_decay():
    # theta0 = 2, grad 0.5, wd 0.25 -> g1 = 0.5 + 0.25*2 = 1.0; b1 = 1.0; d1 = g1 + 0.9 b1 = 1.9
    # theta1 = 2 - 0.1*1.9 = 1.81
    # step 2: g2 = 0.5 + 0.25*1.81 = 0.9525; b2 = 0.9*1 + 0.9525 = 1.8525
    #         d2 = 0.9525 + 0.9*1.8525 = 2.61975; theta2 = 1.81 - 0.261975 = 1.548025
    p = param([2.0])
    opt = SGD([p], lr=0.1, momentum=0.9, weight_decay=0.25, nesterov=True)
    set_grad(p, [0.5])
    opt.step()
    np.testing.assert_allclose(p.data, [1.81], atol=1e-14)
    opt.step()
    np.testing.assert_allclose(opt.state["0"]["momentum_buffer"], [1.8525], atol=1e-14)
    np.testing.assert_allclose(p.data, [1.548025], atol=1e-14)


# -- Adam / AdamW -------------------------------------------------------------------------------------
def test_adam_constant_gradient_moves_lr_per_step():
    # With a constant gradient g the bias-corrected moments are m^ = g and v^ = g^2 at every step, so
    # with eps = 0 each step moves theta by exactly lr * sign(g).
    p = param([1.0, -1.0, 3.0])
    opt = Adam([p], lr=0.01, eps=0.0)
    for t in range(1, 5):
        set_grad(p, [2.0, -0.001, 50.0])
        opt.step()
        np.testing.assert_allclose(p.data, [1.0 - 0.01 * t, -1.0 + 0.01 * t, 3.0 - 0.01 * t],
                                   rtol=0, atol=1e-14)
    assert opt.state["0"]["step"] == 4


def test_adam_eps_is_added_to_the_corrected_root():
    # Step 1, g = 1e-8, eps = 1e-8: m^ = g, sqrt(v^) = |g|, update = lr * g / (|g| + eps) = lr / 2.
    # (eps added to the *uncorrected* sqrt(v) = sqrt(0.001)*1e-8 would give a very different step.)
    p = param([0.0])
    opt = Adam([p], lr=0.1, eps=1e-8)
    set_grad(p, [1e-8])
    opt.step()
    np.testing.assert_allclose(p.data, [-0.05], rtol=1e-12)


def test_adam_first_moments_hand_computed():
    # betas (0.5, 0.75), g1 = 2, g2 = -1:
    # m1 = 0.5*2 = 1,   v1 = 0.25*4 = 1;   m2 = 0.5*1 + 0.5*(-1) = 0,  v2 = 0.75 + 0.25 = 1
    p = param([0.0])
    opt = Adam([p], lr=0.1, betas=(0.5, 0.75))
    set_grad(p, [2.0])
    opt.step()
    np.testing.assert_allclose(opt.state["0"]["exp_avg"], [1.0], atol=1e-15)
    np.testing.assert_allclose(opt.state["0"]["exp_avg_sq"], [1.0], atol=1e-15)
    set_grad(p, [-1.0])
    opt.step()
    np.testing.assert_allclose(opt.state["0"]["exp_avg"], [0.0], atol=1e-15)
    np.testing.assert_allclose(opt.state["0"]["exp_avg_sq"], [1.0], atol=1e-15)


def test_amsgrad_keeps_the_largest_second_moment():
    # betas (0, 0.5): v_t = 0.5 v + 0.5 g^2 -> g = 2 then 0: v1 = 2, v2 = 1; vmax2 = 2.
    p = param([0.0])
    opt = Adam([p], lr=0.1, betas=(0.0, 0.5), amsgrad=True)
    set_grad(p, [2.0])
    opt.step()
    set_grad(p, [0.0])
    opt.step()
    np.testing.assert_allclose(opt.state["0"]["exp_avg_sq"], [1.0], atol=1e-15)
    np.testing.assert_allclose(opt.state["0"]["max_exp_avg_sq"], [2.0], atol=1e-15)


def test_adamw_decay_is_decoupled_and_adam_decay_is_not():
    # Zero gradient: AdamW only shrinks, theta_k = theta0 (1 - lr wd)^k (m = v = 0, update 0).
    # Adam's L2 decay instead enters the gradient (g = wd theta) and moves ~lr per step.
    pw, pa = param([2.0, -4.0]), param([2.0, -4.0])
    ow = AdamW([pw], lr=0.1, weight_decay=0.5)
    oa = Adam([pa], lr=0.1, weight_decay=0.5, eps=0.0)
    for _ in range(3):
        ow.step()
        oa.step()
    np.testing.assert_allclose(pw.data, np.array([2.0, -4.0]) * 0.95 ** 3, rtol=1e-14)
    np.testing.assert_allclose(ow.state["0"]["exp_avg"], 0.0, atol=0)
    # Adam, g = 0.5 theta, step 1 moves exactly lr * sign(theta) (eps 0): [1.9, -3.9] after step 1
    assert np.all(np.abs(pa.data - np.array([2.0, -4.0])) > 0.25)


def test_adamw_default_weight_decay():
    assert AdamW([param([1.0])]).weight_decay == 1e-2
    assert Adam([param([1.0])]).weight_decay == 0.0


# -- common behaviour ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda ps: SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: Adam(ps, lr=0.1), lambda ps: AdamW(ps, lr=0.1)])
def test_float32_stays_float32(make):
    p = param(np.linspace(-1, 1, 6).reshape(2, 3), np.float32)
    opt = make([p])
    for _ in range(2):
        set_grad(p, np.ones((2, 3)))
        opt.step()
    assert p.data.dtype == np.float32 and p.grad.dtype == np.float32
    for v in opt.state["0"].values():
        if isinstance(v, np.ndarray):
            assert v.dtype == np.float32


def test_parameter_without_grad_is_skipped():
    a, b = param([1.0]), param([1.0])
    opt = Adam([("a", a), ("b", b)], lr=0.1)
    b.grad = None
    set_grad(a, [1.0])
    opt.step()
    assert b.data[0] == 1.0 and opt.state["b"] == {} and opt.state["a"]["step"] == 1


def test_params_forms_and_names():
    class Net(Module):
        def __init__(self):
            super().__init__()
            self.w = param([1.0, 2.0])
            self.b = param([0.0])

    net = Net()
    assert SGD(net.named_parameters(), lr=1).param_names == ["w", "b"]
    assert SGD(net.parameters(), lr=1).param_names == ["0", "1"]
    assert SGD(net, lr=1).param_names == ["w", "b"]


def test_zero_grad_in_place():
    p = param([1.0, 2.0])
    g = p.grad
    set_grad(p, [3.0, 4.0])
    SGD([p], lr=1).zero_grad()
    assert p.grad is g and not p.grad.any()


def test_lr_attribute_drives_the_step():
    p = param([1.0])
    opt = SGD([p], lr=0.1)
    opt.lr = 0.5
    set_grad(p, [1.0])
    opt.step()
    assert p.data[0] == 0.5


@pytest.mark.parametrize("bad, match", [
    (lambda p: SGD([p], lr=-1.0), "lr"),
    (lambda p: SGD([p], lr=0.1, nesterov=True), "nesterov"),
    (lambda p: SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "nesterov"),
    (lambda p: SGD([p], lr=0.1, momentum=-0.5), "momentum"),
    (lambda p: Adam([p], betas=(1.0, 0.9)), "betas"),
    (lambda p: Adam([p], betas=(0.9,)), "betas"),
    (lambda p: Adam([p], eps=-1.0), "eps"),
    (lambda p: AdamW([p], weight_decay=-0.1), "weight_decay"),
    (lambda p: Adam([p], lr=float("nan")), "lr"),
    (lambda p: Adam([], lr=0.1), "empty"),
    (lambda p: Adam([p, p], lr=0.1), "twice"),
    (lambda p: Adam([("a", p), ("a", Parameter(np.zeros(1)))], lr=0.1), "unique"),
    (lambda p: Adam([np.zeros(3)], lr=0.1), "params\\[0\\]"),
])
def test_bad_arguments(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bad(param([1.0]))


def test_step_rejects_a_gradient_of_the_wrong_shape():
    a, b = param([1.0, 2.0]), param([1.0])
    opt = SGD([("a", a), ("b", b)], lr=0.1)
    set_grad(a, [1.0, 1.0])
    b.grad = np.zeros(3)
    with pytest.raises(ValueError, match="'b'.*shape"):
        opt.step()
    assert a.data.tolist() == [1.0, 2.0]      # checked before anything moved


# -- state dicts --------------------------------------------------------------------------------------
def _run(opt, params, grads):
    for g in grads:
        for p, gp in zip(params, g):
            p.grad[...] = gp
        opt.step()


@pytest.mark.parametrize("kind", ["sgd", "adam", "adamw_amsgrad"])
def test_state_dict_round_trip_continues_bit_identically(kind):
    rng = np.random.default_rng(0)
    make = {"sgd": lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
            "adam": lambda ps: Adam(ps, lr=0.01, betas=(0.8, 0.9)),
            "adamw_amsgrad": lambda ps: AdamW(ps, lr=0.01, amsgrad=True)}[kind]
    init = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    grads = [[rng.standard_normal(a.shape) for a in init] for _ in range(5)]
    ref = [Parameter(a.copy()) for a in init]
    ref_opt = make(list(zip(["w", "b"], ref)))
    _run(ref_opt, ref, grads)                           # 5 uninterrupted steps

    half = [Parameter(a.copy()) for a in init]
    opt1 = make(list(zip(["w", "b"], half)))
    _run(opt1, half, grads[:3])
    sd = opt1.state_dict()
    resumed = [Parameter(p.data.copy()) for p in half]
    opt2 = make(list(zip(["w", "b"], resumed)))
    opt2.load_state_dict(sd)
    _run(opt2, resumed, grads[3:])
    for a, b in zip(ref, resumed):
        np.testing.assert_array_equal(a.data, b.data)
    # the state dict holds copies: stepping opt1 further does not change sd
    before = {k: v.copy() for k, v in sd["state"]["w"].items() if isinstance(v, np.ndarray)}
    _run(opt1, half, grads[3:4])
    for k, v in before.items():
        np.testing.assert_array_equal(sd["state"]["w"][k], v)


def test_load_state_dict_restores_hyperparameters():
    p = param([1.0])
    a = Adam([p], lr=0.5, betas=(0.1, 0.2))
    b = Adam([param([1.0])], lr=0.001)
    b.load_state_dict(a.state_dict())
    assert b.lr == 0.5 and b.betas == (0.1, 0.2)


def _trained_adam():
    w, v = param(np.ones((2, 2))), param(np.ones(3))
    opt = Adam([("w", w), ("v", v)], lr=0.1)
    set_grad(w, np.ones((2, 2)))
    set_grad(v, np.ones(3))
    opt.step()
    return opt


@pytest.mark.parametrize("mutate, match", [
    (lambda sd: sd.update(type="SGD"), "SGD"),
    (lambda sd: sd.pop("state"), "lacks keys"),
    (lambda sd: sd.update(param_names=["w", "x"]), "missing \\['v'\\], unexpected \\['x'\\]"),
    (lambda sd: sd["state"]["w"].update(exp_avg=np.zeros((3, 3))), "w/exp_avg: expected shape"),
    (lambda sd: sd["state"]["v"].pop("exp_avg_sq"), "v: expected state keys"),
    (lambda sd: sd["state"]["v"].update(step=-2), "step"),
    (lambda sd: sd["state"].update(ghost={}), "unknown parameters \\['ghost'\\]"),
    (lambda sd: sd["hyperparams"].update(lr=-1.0), "lr"),
    (lambda sd: sd["hyperparams"].pop("eps"), "hyperparams"),
])
def test_load_state_dict_errors_leave_the_optimizer_unchanged(mutate, match):
    src = _trained_adam().state_dict()
    mutate(src)
    dst = _trained_adam()
    dst.lr = 0.25
    dst.state["w"]["exp_avg"][...] = 7.0
    before = dst.state_dict()
    with pytest.raises((ValueError, TypeError), match=match):
        dst.load_state_dict(src)
    after = dst.state_dict()
    assert after["hyperparams"] == before["hyperparams"]
    for n in ("w", "v"):
        for k, v in before["state"][n].items():
            np.testing.assert_array_equal(after["state"][n][k], v)


# -- warm-up schedule ---------------------------------------------------------------------------------
def test_warmup_lr_hand_values():
    # d_model 512, warmup 4000 (the paper's base model):
    # step 4000 (peak): 512^-0.5 * 4000^-0.5 = (2,048,000)^-0.5 = 6.987712429686844e-04
    assert warmup_lr(4000, 512, 4000) == pytest.approx(6.987712429686844e-04, rel=1e-14)
    # step 16000: four times further, half the peak: (8,192,000)^-0.5 = 3.4938562148434216e-04
    assert warmup_lr(16000, 512, 4000) == pytest.approx(3.4938562148434216e-04, rel=1e-14)
    # step 1: 512^-0.5 * 1 * 4000^-1.5 = 1 / (22.627417 * 252982.21) = 1.7469281074217108e-07
    assert warmup_lr(1, 512, 4000) == pytest.approx(1.7469281074217108e-07, rel=1e-13)
    assert warmup_lr(0, 512, 4000) == warmup_lr(1, 512, 4000)
    # linear in the warm-up: step 2000 is half the peak; factor scales everything
    assert warmup_lr(2000, 512, 4000, factor=2.0) == pytest.approx(6.987712429686844e-04, rel=1e-14)


@pytest.mark.parametrize("args, match", [((-1, 8, 4), "step"), ((1, 0, 4), "d_model"),
                                         ((1, 8, 0), "warmup_steps"), ((1.5, 8, 4), "step"),
                                         ((1, 8, 4, -1.0), "factor")])
def test_warmup_lr_bad_arguments(args, match):
    with pytest.raises((ValueError, TypeError), match=match):
        warmup_lr(*args)


def test_warmup_schedule_sets_lr_like_lambdalr():
    # LambdaLR(opt with base lr 1, lambda s: warmup_lr(s + 1)): construction -> rate(1); k steps ->
    # rate(k + 1). d_model 16, warmup 4: rate(s) = 0.25 * min(s^-0.5, s/8) -> 1/32, 1/16, 3/32, 1/8,
    # then 0.25/sqrt(5).
    opt = Adam([param([0.0])], lr=123.0)
    sched = WarmupSchedule(opt, d_model=16, warmup_steps=4)
    seen = [opt.lr]
    for _ in range(4):
        opt.step()
        sched.step()
        seen.append(opt.lr)
    np.testing.assert_allclose(seen, [1 / 32, 1 / 16, 3 / 32, 1 / 8, 0.25 / math.sqrt(5)], rtol=1e-15)
    assert sched.last_epoch == 4 and sched.get_last_lr() == [opt.lr]


def test_warmup_schedule_state_round_trip_and_errors():
    opt = SGD([param([0.0])], lr=1.0)
    s = WarmupSchedule(opt, 16, 4, factor=2.0)
    for _ in range(6):
        s.step()
    s2 = WarmupSchedule(SGD([param([0.0])], lr=1.0), 8, 100)
    s2.load_state_dict(s.state_dict())
    assert (s2.last_epoch, s2.d_model, s2.warmup_steps, s2.factor) == (6, 16, 4, 2.0)
    s2.step()
    s.step()
    assert s2.optimizer.lr == s.optimizer.lr
    bad = dict(s.state_dict(), last_epoch=-3)
    with pytest.raises(ValueError, match="last_epoch"):
        s2.load_state_dict(bad)
    assert s2.last_epoch == 7
    with pytest.raises(ValueError, match="keys"):
        s2.load_state_dict({"last_epoch": 1})
    with pytest.raises(TypeError, match="Optimizer"):
        WarmupSchedule(object(), 16, 4)


# -- gradient clipping --------------------------------------------------------------------------------
def test_clip_grad_norm_scales_to_max_norm():
    # grads [3, 4] and [12]: total norm sqrt(9 + 16 + 144) = 13
    a, b = param([0.0, 0.0]), param([0.0])
    set_grad(a, [3.0, 4.0])
    set_grad(b, [12.0])
    total = clip_grad_norm([("a", a), ("b", b)], max_norm=6.5)
    assert total == pytest.approx(13.0, rel=1e-15)
    coef = 6.5 / (13.0 + 1e-6)
    np.testing.assert_allclose(a.grad, [3 * coef, 4 * coef], rtol=1e-15)
    np.testing.assert_allclose(b.grad, [12 * coef], rtol=1e-15)


def test_clip_grad_norm_leaves_small_gradients_alone():
    a = param([0.0, 0.0], np.float32)
    set_grad(a, [0.3, -0.4])
    before = a.grad.copy()
    total = clip_grad_norm([a], max_norm=1.0)
    assert total == pytest.approx(0.5, rel=1e-6)
    np.testing.assert_array_equal(a.grad, before)
    assert a.grad.dtype == np.float32


def test_clip_grad_norm_inf_norm_and_errors():
    a = param([1.0, -5.0, 2.0])
    set_grad(a, [1.0, -5.0, 2.0])
    assert clip_grad_norm(a, max_norm=1.0, norm_type=float("inf")) == 5.0
    np.testing.assert_allclose(a.grad, np.array([1.0, -5.0, 2.0]) / (5.0 + 1e-6), rtol=1e-15)
    with pytest.raises(ValueError, match="max_norm"):
        clip_grad_norm([a], max_norm=-1.0)
    with pytest.raises(ValueError, match="norm_type"):
        clip_grad_norm([a], max_norm=1.0, norm_type=0.5)
