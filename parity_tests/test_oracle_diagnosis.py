"""The likely-cause diagnosis: each catalogued mistake, computed here by hand, is named; the
correct output names nothing."""
from __future__ import annotations

import math

import numpy as np
import pytest

from parity_tests.oracle.components import get
from parity_tests.oracle.core.diagnose import likely_causes
from parity_tests.oracle.reading.findings import Findings


def _case(name, **ex):
    comp = get(name)
    return comp, comp.build(ex, "float64", Findings())


def _ln(x, g, b, eps, ddof=0, outside=False):
    mu = x.mean(-1, keepdims=True)
    sd = np.sqrt(((x - mu) ** 2).sum(-1, keepdims=True) / (x.shape[-1] - ddof) + (0 if outside else eps))
    return g * (x - mu) / (sd + (eps if outside else 0)) + b


@pytest.mark.parametrize("ddof,outside,word", [(1, False, "unbiased variance"),
                                               (0, True, "eps added outside"),
                                               (1, True, "unbiased std with eps outside")])
def test_layernorm_mistakes_are_named(ddof, outside, word):
    comp, case = _case("layernorm", B=2, T=3, d_model=4, eps=1e-5, scale=0.01, seed=3)
    p, x = case.params, case.inputs["x"]
    got = _ln(x, p["weight"], p["bias"], 1e-5, ddof, outside)
    causes = likely_causes(comp, case, got)
    assert any(c.startswith(word) for c in causes), causes


def test_correct_layernorm_names_nothing():
    comp, case = _case("layernorm", B=2, T=3, d_model=4, eps=1e-5, scale=0.01, seed=3)
    p, x = case.params, case.inputs["x"]
    assert likely_causes(comp, case, _ln(x, p["weight"], p["bias"], 1e-5)) == []


def _sdpa(q, k, v, keep, scale, axis=-1):
    s = q @ np.swapaxes(k, -1, -2) * scale
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    s = s - s.max(axis=axis, keepdims=True)
    e = np.exp(s)
    return (e / e.sum(axis=axis, keepdims=True)) @ v


def test_sdpa_mistakes_are_named():
    comp, case = _case("sdpa", B=1, H=2, Tq=3, Tk=3, dk=4, dv=2, mask={"kind": "none", "keep": None},
                       seed=5)
    q, k, v = case.inputs["q"], case.inputs["k"], case.inputs["v"]
    assert any("not scaled" in c for c in likely_causes(comp, case, _sdpa(q, k, v, None, 1.0)))
    assert any("divided by d_k" in c
               for c in likely_causes(comp, case, _sdpa(q, k, v, None, 1 / 4)))
    assert any("queries axis" in c for c in likely_causes(
        comp, case, _sdpa(q, k, v, None, 1 / math.sqrt(4), axis=-2)))
    assert likely_causes(comp, case, _sdpa(q, k, v, None, 1 / math.sqrt(4))) == []


def _gelu(x):
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))


def _encoder(case, pre_norm, act):
    p, x, H = case.params, case.inputs["x"], case.hyper["num_heads"]
    B, T, D = x.shape

    def lin(name, t):
        return t @ p[f"{name}.weight"].T + p[f"{name}.bias"]

    def ln(name, t):
        mu = t.mean(-1, keepdims=True)
        return p[f"{name}.weight"] * (t - mu) / np.sqrt(t.var(-1, keepdims=True) + 1e-5) + p[f"{name}.bias"]

    def attn(t):
        q, k, v = (lin(f"self_attn.{n}_proj", t).reshape(B, T, H, D // H).transpose(0, 2, 1, 3)
                   for n in ("q", "k", "v"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D // H)
        w = np.exp(s - s.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        return lin("self_attn.out_proj", (w @ v).transpose(0, 2, 1, 3).reshape(B, T, D))

    def ffn(t):
        return lin("feed_forward.linear2", act(lin("feed_forward.linear1", t)))
    if pre_norm:
        x = x + attn(ln("norm1", x))
        return x + ffn(ln("norm2", x))
    x = ln("norm1", x + attn(x))
    return ln("norm2", x + ffn(x))


def test_layer_activation_and_norm_placement_are_named_alone_and_together():
    comp, case = _case("encoder_layer", B=1, T=3, d_model=4, num_heads=2, d_ff=5,
                       activation="relu", eps=1e-5, norm_first=False,
                       mask={"kind": "none", "keep": None}, seed=7)
    def relu(t):
        return np.maximum(t, 0)
    assert likely_causes(comp, case, _encoder(case, False, relu)) == []
    gelu_only = likely_causes(comp, case, _encoder(case, False, _gelu))
    assert gelu_only and gelu_only[0].startswith("GELU (exact"), gelu_only
    pre_only = likely_causes(comp, case, _encoder(case, True, relu))
    assert pre_only and pre_only[0].startswith("pre-norm"), pre_only
    both = likely_causes(comp, case, _encoder(case, True, _gelu))
    assert any("GELU (exact" in c and "pre-norm" in c for c in both), both


def test_ffn_without_activation_is_named():
    comp, case = _case("ffn", B=2, T=3, d_model=4, d_ff=6, activation="relu", seed=2)
    p, x = case.params, case.inputs["x"]
    lin = (x @ p["linear1.weight"].T + p["linear1.bias"]) @ p["linear2.weight"].T + p["linear2.bias"]
    assert any("no activation" in c for c in likely_causes(comp, case, lin))
    relu = np.maximum(x @ p["linear1.weight"].T + p["linear1.bias"], 0) @ p["linear2.weight"].T \
        + p["linear2.bias"]
    assert likely_causes(comp, case, relu) == []
