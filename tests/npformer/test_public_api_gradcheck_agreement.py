"""npformer.checks.gradcheck agrees with the independent check: both pass the correct modules and
both fail planted bugs.

The check itself (fourth-order finite differences, the error measure, the bound) is described in
tests/npformer/public_api_check.py."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from tests.npformer.public_api_check import (
    DROPS,
    TOL,
    assert_close,
    cfg,
    jitter,
    mha_grads,
    model_check,
    module_check,
    pair_check,
    rand,
)


class ForgetfulLayerNorm(nf.LayerNorm):
    """Planted bug: backward drops the variance term of dL/dx."""

    def backward(self, dout):
        dx_right = super().backward(dout)
        x = self._last_x
        xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + self.eps)
        g = dout * self.weight.data
        rstd = 1 / np.sqrt(x.var(-1, keepdims=True) + self.eps)
        return dx_right + rstd * xhat * (g * xhat).mean(-1, keepdims=True)   # undo that term

    def forward(self, x):
        self._last_x = x
        return super().forward(x)


class SwappedKVAttention(nf.MultiHeadAttention):
    """Planted bug: returns dvalue as dkey and dkey as dvalue."""

    def backward(self, dout):
        dq, dk, dv = super().backward(dout)
        return dq, dv, dk


class HalfBiasLinear(nf.Linear):
    """Planted bug: the bias gradient is accumulated at half its value."""

    def backward(self, dout):
        before = self.bias.grad.copy()
        dx = super().backward(dout)
        self.bias.grad[...] = before + (self.bias.grad - before) / 2
        return dx


def agreement_cases():
    rng = np.random.default_rng(30)
    x5 = rand(rng, 2, 3, 5) * 2
    q, kv = rand(rng, 2, 3, 8), rand(rng, 2, 4, 8)
    kv2 = rand(rng, 2, 4, 8)
    mask = nf.causal_mask(3, 4)
    mask = np.broadcast_to(mask, (2, 1, 3, 4)).copy()
    mask[1, :, 0] = False                                                # fully masked row
    lin_x = rand(rng, 4, 3)

    def mha(cls):
        m = jitter(cls(8, 2, dropout=0.2, dtype="float64", rng=np.random.default_rng(0)))
        return m, (q, kv, kv2), dict(mask=mask), mha_grads

    return {
        "layernorm": (lambda: (jitter(nf.LayerNorm(5, dtype="float64")), (x5,), {},
                               lambda gr: {"x": gr}),
                      lambda: (jitter(ForgetfulLayerNorm(5, dtype="float64")), (x5,), {},
                               lambda gr: {"x": gr})),
        "attention": (lambda: mha(nf.MultiHeadAttention), lambda: mha(SwappedKVAttention)),
        "linear": (lambda: (jitter(nf.Linear(3, 2, dtype="float64")), (lin_x,), {},
                            lambda gr: {"x": gr}),
                   lambda: (jitter(HalfBiasLinear(3, 2, dtype="float64")), (lin_x,), {},
                            lambda gr: {"x": gr})),
    }


def run_both(factory):
    """(this file's verdict, npformer.checks.gradcheck's verdict) on a fresh module, same upstream g."""
    m, args, kw, combine = factory()
    names = ["x"] if len(args) == 1 else ["query", "key", "value"]
    inputs = {n: a.copy() for n, a in zip(names, args)}
    errs = module_check(m, lambda mod, **i: mod(*[i[n] for n in names], **kw), inputs,
                        combine=combine)
    mine = all(e <= TOL for e in errs.values())
    m2, args2, kw2, _ = factory()
    out = m2(*args2, **kw2)
    g = np.random.default_rng(123).standard_normal(out.shape)
    report = nf.gradcheck(m2, *[a.copy() for a in args2], upstream=g, **kw2)
    return mine, bool(report.passed), errs, report


@pytest.mark.parametrize("name", ["layernorm", "attention", "linear"])
def test_npformer_gradcheck_agrees(name):
    good, bad = agreement_cases()[name]
    mine, theirs, errs, report = run_both(good)
    assert mine and theirs, (errs, str(report))
    assert report.max_error <= TOL and isinstance(report, nf.GradcheckReport)
    mine, theirs, errs, report = run_both(bad)
    assert not mine, f"this check missed the planted bug: {errs}"
    assert not theirs, f"npformer.checks.gradcheck missed the planted bug:\n{report}"
    with pytest.raises(AssertionError):
        report.raise_if_failed()


def test_npformer_gradcheck_on_a_model_with_dropout():
    model = jitter(nf.CausalLM(cfg(num_decoder_layers=1, **DROPS), seed=7))
    ids = np.array([[1, 2, 3, 0], [4, 5, 6, 7]])
    report = nf.gradcheck(model, ids, max_per_tensor=3)
    assert report.passed, str(report)
    assert_close(model_check(model, lambda m, ids: m(ids), {"ids": ids},
                             input_keys={"tgt": ("decoder_input", "ids")}))


def test_npformer_check_pair_agrees():
    """The functional-pair checker too: passes layernorm's pair, fails one that forgets the
    variance term (and so does this file's check)."""
    rng = np.random.default_rng(31)
    x, gamma, beta = rand(rng, 2, 3, 5) * 2, rand(rng, 5), rand(rng, 5)

    def forgetful_backward(dout, cache):
        dx, dgamma, dbeta = nf.layernorm_backward(dout, cache)
        xhat, rstd, gam = cache
        return dx + rstd * xhat * (dout * gam * xhat).mean(-1, keepdims=True), dgamma, dbeta

    def fwd(x, gamma, beta):
        return nf.layernorm_forward(x, gamma, beta, 1e-5)

    arrays = dict(x=x, gamma=gamma, beta=beta)
    good = nf.check_pair(fwd, nf.layernorm_backward, (x, gamma, beta))
    assert good.passed, str(good)
    assert_close(pair_check(fwd, nf.layernorm_backward, arrays, ["x", "gamma", "beta"]))
    bad = nf.check_pair(fwd, forgetful_backward, (x, gamma, beta))
    assert not bad.passed and "input:x" in bad.failures()
    mine = pair_check(fwd, forgetful_backward, arrays, ["x", "gamma", "beta"])
    assert mine["x"] > TOL and mine["gamma"] <= TOL and mine["beta"] <= TOL
