"""The twins behave alike on bad input: component load_state_dict is all-or-nothing and refuses
complex, string and ragged values with the same messages; clip_grad_norm refuses norm_type < 1 and
honours error_if_nonfinite the same way in both."""
import math
import re

import numpy as np
import pytest
import torch

import npformer.layers.layernorm as np_ln
import npformer.layers.linear as np_lin
import npformer.optim as np_optim
import torchformer.layers.layernorm as tf_ln
import torchformer.layers.linear as tf_lin
import torchformer.optim as tf_optim
from npformer.layers.module import Parameter


def pair():
    return (np_lin.Linear(3, 2, dtype="float64", rng=np.random.default_rng(0)),
            tf_lin.Linear(3, 2, dtype="float64", rng=np.random.default_rng(0)))


def snapshot(m):
    return {k: np.array(v.detach().numpy() if hasattr(v, "detach") else v, copy=True)
            for k, v in m.state_dict().items()}


def error_of(fn):
    try:
        fn()
    except (TypeError, ValueError) as e:
        return type(e), str(e)
    raise AssertionError("no error")


GOOD_W = np.ones((2, 3))
BAD_STATES = {
    "bad bias shape (weight first)": {"weight": GOOD_W, "bias": np.ones(5)},
    "complex weight": {"weight": np.ones((2, 3), np.complex128), "bias": np.ones(2)},
    "string array": {"weight": np.array([["a"] * 3] * 2), "bias": np.ones(2)},
    "ragged list": {"weight": [[1.0, 2.0, 3.0], [1.0]], "bias": np.ones(2)},
    "bool array": {"weight": np.ones((2, 3), bool), "bias": np.ones(2)},
    "missing and unexpected": {"weight": GOOD_W, "bogus": np.ones(2)},
    "not a mapping": [("weight", GOOD_W)],
}


@pytest.mark.parametrize("case", list(BAD_STATES), ids=list(BAD_STATES))
def test_component_loads_are_all_or_nothing_with_the_same_messages(case):
    npm, tfm = pair()
    before_np, before_tf = snapshot(npm), snapshot(tfm)
    e_np = error_of(lambda: npm.load_state_dict(BAD_STATES[case]))
    e_tf = error_of(lambda: tfm.load_state_dict(BAD_STATES[case]))
    assert e_np == e_tf, (e_np, e_tf)                        # same type, same message
    for before, m in ((before_np, npm), (before_tf, tfm)):
        after = snapshot(m)
        assert all(np.array_equal(before[k], after[k]) for k in before), case   # nothing written


def test_lists_and_tensors_load_alike():
    npm, tfm = pair()
    state = {"weight": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "bias": [0.5, -0.5]}
    npm.load_state_dict(state)
    tfm.load_state_dict(state)
    assert np.array_equal(npm.weight.data, tfm.weight.detach().numpy())
    ln = tf_ln.LayerNorm(3, dtype="float64")
    ln.load_state_dict({"weight": torch.full((3,), 2.0, dtype=torch.float64),
                        "bias": torch.zeros(3, dtype=torch.float64)})
    assert float(ln.weight.detach()[0]) == 2.0
    with pytest.raises(ValueError, match=re.escape("LayerNorm.load_state_dict: weight: expected "
                                                   "shape (3,), got (4,) (nothing was loaded)")):
        ln.load_state_dict({"weight": torch.ones(4, dtype=torch.float64),
                            "bias": torch.zeros(3, dtype=torch.float64)})
    assert np.array_equal(np_ln.LayerNorm(3).state_dict()["weight"], np.ones(3, np.float32))


def grads_np(values):
    ps = [Parameter(np.zeros_like(v)) for v in values]
    for p, v in zip(ps, values):
        p.grad = v.copy()
    return ps


def grads_tf(values):
    ps = [torch.nn.Parameter(torch.zeros(v.shape, dtype=torch.float64)) for v in values]
    for p, v in zip(ps, values):
        p.grad = torch.from_numpy(v.copy())
    return ps


@pytest.mark.parametrize("norm_type", [0.5, 0, -1, float("nan")])
def test_norm_type_below_one_refused_alike(norm_type):
    vals = [np.array([3.0, 4.0])]
    e_np = error_of(lambda: np_optim.clip_grad_norm(grads_np(vals), 1.0, norm_type=norm_type))
    e_tf = error_of(lambda: tf_optim.clip_grad_norm(grads_tf(vals), 1.0, norm_type=norm_type))
    assert e_np == e_tf and "norm_type: expected a float >= 1 or inf" in e_np[1]


def test_error_if_nonfinite_alike():
    vals = [np.array([1.0, np.nan]), np.array([2.0])]
    for clip, mk, get in ((np_optim.clip_grad_norm, grads_np, lambda p: p.grad),
                          (tf_optim.clip_grad_norm, grads_tf, lambda p: p.grad.numpy())):
        ps = mk(vals)
        with pytest.raises(RuntimeError, match="total norm of order 2.0 of the gradients is "
                                               "non-finite"):
            clip(ps, 1.0, error_if_nonfinite=True)
        assert np.array_equal(get(ps[1]), vals[1])             # untouched
        ps = mk(vals)
        assert math.isnan(clip(ps, 1.0, error_if_nonfinite=False))   # torch's default: clips anyway
        assert np.isnan(get(ps[1])).all()
