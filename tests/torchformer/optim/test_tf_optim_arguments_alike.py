"""clip_grad_norm and the warm-up schedule take the same arguments in both twins, NumPy numbers
included, and refuse the same ones with the same message.

Before: torchformer refused `max_norm=np.float32(1.0)`, `error_if_nonfinite=np.bool_(True)` and a
schedule of `d_model=np.int64(16)` ("expected an int, got int64"), which npformer took; npformer took
`norm_type=True` as 1 and ended `norm_type=None` or `"abc"` in float()'s own TypeError/ValueError,
which torchformer named."""
import math

import numpy as np
import pytest
import torch

import npformer.optim as np_optim
import torchformer.optim as tf_optim
from npformer.layers.module import Parameter

VALUES = [np.array([3.0, 4.0]), np.array([12.0])]


def grads_np():
    ps = [Parameter(np.zeros(v.shape)) for v in VALUES]
    for p, v in zip(ps, VALUES):
        p.grad = v.copy()
    return ps


def grads_tf():
    ps = [torch.nn.Parameter(torch.zeros(v.shape, dtype=torch.float64)) for v in VALUES]
    for p, v in zip(ps, VALUES):
        p.grad = torch.from_numpy(v.copy())
    return ps


def outcome(fn):
    try:
        return "ok", fn()
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("kwargs", [
    dict(max_norm=np.float32(1.0)), dict(max_norm=np.int64(1)), dict(max_norm=1.0, norm_type="inf"),
    dict(max_norm=1.0, norm_type=np.float32(3.0)), dict(max_norm=1.0, error_if_nonfinite=np.bool_(True)),
    dict(max_norm=1.0, norm_type=True), dict(max_norm=1.0, norm_type=None),
    dict(max_norm=1.0, norm_type="abc"), dict(max_norm=1.0, norm_type="2"),
    dict(max_norm=1.0, norm_type=2 + 0j), dict(max_norm=True), dict(max_norm="1"),
    dict(max_norm=1.0, error_if_nonfinite="yes"),
], ids=repr)
def test_clip_grad_norm_takes_and_refuses_alike(kwargs):
    got_np = outcome(lambda: np_optim.clip_grad_norm(grads_np(), **kwargs))
    got_tf = outcome(lambda: tf_optim.clip_grad_norm(grads_tf(), **kwargs))
    assert got_np[0] == got_tf[0]
    if got_np[0] == "ok":
        assert got_np[1] == pytest.approx(got_tf[1], rel=1e-12)
    else:
        assert got_np[1] == got_tf[1] and got_np[1].startswith("clip_grad_norm: ")


def test_the_string_inf_is_the_max_norm():
    for clip, mk in ((np_optim.clip_grad_norm, grads_np), (tf_optim.clip_grad_norm, grads_tf)):
        assert clip(mk(), 1.0, norm_type="inf") == clip(mk(), 1.0, norm_type=math.inf) == 12.0


def test_the_schedule_takes_numpy_numbers_in_both_twins():
    np_model = [Parameter(np.zeros(2))]
    tf_model = [torch.nn.Parameter(torch.zeros(2))]
    args = dict(d_model=np.int64(16), warmup_steps=np.int32(4), factor=np.float32(2.0))
    s_np = np_optim.WarmupSchedule(np_optim.Adam(np_model, lr=1.0), **args)
    s_tf = tf_optim.WarmupSchedule(tf_optim.Adam(tf_model, lr=1.0), **args)
    for _ in range(6):
        assert s_np.optimizer.lr == s_tf.get_last_lr()[0]
        s_np.step()
        s_tf.optimizer.step()
        s_tf.step()
    assert (type(s_np.d_model), type(s_tf.d_model)) == (int, int)


@pytest.mark.parametrize("bad", [dict(d_model=16.0), dict(warmup_steps=True), dict(factor=math.nan)],
                         ids=repr)
def test_the_schedule_refuses_alike(bad):
    args = dict(d_model=16, warmup_steps=4) | bad
    got_np = outcome(lambda: np_optim.WarmupSchedule(np_optim.Adam([Parameter(np.zeros(2))], lr=1.0),
                                                     **args))
    got_tf = outcome(lambda: tf_optim.WarmupSchedule(
        tf_optim.Adam([torch.nn.Parameter(torch.zeros(2))], lr=1.0), **args))
    assert got_np == got_tf and got_np[0] != "ok"


ARRAY_HYPER = [
    ("Adam", dict(lr=torch.tensor(0.01))), ("AdamW", dict(lr=torch.tensor(0.01))),
    ("SGD", dict(lr=torch.tensor(0.01))), ("Adam", dict(lr=torch.tensor([0.01]))),
    ("Adam", dict(lr=np.array(0.01))), ("AdamW", dict(lr=np.array([0.01]))),
    ("AdamW", dict(weight_decay=torch.tensor(0.0))), ("Adam", dict(betas=(torch.tensor(0.9), 0.98))),
    ("Adam", dict(eps=np.array(1e-8))), ("SGD", dict(lr=0.1, momentum=torch.tensor(0.9))),
]


@pytest.mark.parametrize("name, bad", ARRAY_HYPER, ids=repr)
def test_a_tensor_or_array_hyper_parameter_is_refused_alike(name, bad):
    got_np = outcome(lambda: getattr(np_optim, name)([Parameter(np.zeros(2))], **bad))
    got_tf = outcome(lambda: getattr(tf_optim, name)([torch.nn.Parameter(torch.zeros(2))], **bad))
    field = list(bad)[-1]
    for kind, message in (got_np, got_tf):
        assert kind == "TypeError", message
        assert message.startswith(f"{name}: {field}") and "expected a Python or NumPy number" in message


CHANGED_HYPER = [
    ("Adam", "lr", math.nan), ("Adam", "lr", -1.0), ("AdamW", "lr", "0.1"), ("Adam", "eps", math.nan),
    ("AdamW", "weight_decay", math.inf), ("Adam", "betas", (0.9, 1.5)), ("Adam", "amsgrad", "yes"),
    ("SGD", "lr", math.nan), ("SGD", "momentum", -1.0), ("SGD", "nesterov", "yes"),
    ("Adam", "lr", torch.tensor(0.1)),
]


@pytest.mark.parametrize("name, field, value", CHANGED_HYPER, ids=repr)
def test_a_hyper_parameter_changed_after_construction_is_refused_at_the_step(name, field, value):
    """npformer's hyper-parameters are attributes (opt.lr = ...), torch's live in param_groups: a bad
    value set there made every weight NaN (or climbed the loss with a negative rate) at the next
    step. Both twins refuse it at the step, alike, before any weight moves."""
    def np_step():
        p = Parameter(np.ones(3))
        p.grad = np.ones(3)
        opt = getattr(np_optim, name)([p], lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
        setattr(opt, field, value)
        try:
            opt.step()
        finally:
            assert np.array_equal(p.data, np.ones(3))
    def tf_step():
        p = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
        p.grad = torch.ones(3, dtype=torch.float64)
        opt = getattr(tf_optim, name)([p], lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
        opt.param_groups[0][field] = value
        try:
            opt.step()
        finally:
            assert torch.equal(p.detach(), torch.ones(3, dtype=torch.float64))
    got_np, got_tf = outcome(np_step), outcome(tf_step)
    assert got_np == got_tf and got_np[0] != "ok", (got_np, got_tf)
    assert got_np[1].startswith(f"{name}: {field}: expected ")
