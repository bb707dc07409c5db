"""The likely-cause diagnosis: each catalogued mistake, computed here by hand, is named; the
correct output names nothing."""
from __future__ import annotations

import math

import numpy as np
import pytest

from parity_tests.oracle.components import get
from parity_tests.oracle.diagnose import likely_causes


def _case(name, **ex):
    comp = get(name)
    return comp, comp.build(ex, "float64", {})


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
