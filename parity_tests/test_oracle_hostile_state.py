"""What one call leaves behind for the next: a module called twice on the same instance (a cache
of keys and values that grows, a weight update inside backward, a copy of a weight kept from the
first call and stale once the weights are written again), a NumPy backward reading module
state instead of its cache or changing its upstream gradient in place, and library functions the
worker's harness relies on replaced by the submission. Each hostile file got `match` (and full
Gradescope marks, or 2 of 3 for the forward-only one) before the repeat and decoy modes
(sandbox/modes.py) and the library snapshot (sandbox/tamper.py).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import gradescope_results
from parity_tests.oracle.sandbox import tamper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
CANDS = candidate_path()

ATTACKS = [
    ("ffn", "kv_cache_grows.py:PositionwiseFeedForward", {}, "mismatch", "a second time"),
    ("ffn", "backward_updates_weights.py:FeedForward", {"weight_layout": "in_out"},
     "mutates_input", "changed its own parameter"),
    ("layernorm", "backward_global_state.py:layernorm_forward", {}, "mismatch",
     "another example's forward and backward"),
    ("layernorm", "mutates_upstream_gradient.py:layernorm_forward", {}, "mutates_input",
     "upstream gradient dout"),
    ("sdpa", "patches_array_equal.py:attention", {}, "interface_error", "numpy.array_equal"),
    # a copy of a weight taken at the first call and used ever after: stale once the weights are
    # written again between the two calls of the same instance, as an optimizer step writes them
    ("ffn", "stale_weight_copy.py:FeedForward", {"weight_layout": "in_out"}, "mismatch",
     "weights written again"),
]


@pytest.mark.parametrize("component,target,opts,verdict,words", ATTACKS,
                         ids=[a[1].split(".")[0] for a in ATTACKS])
def test_state_left_by_a_call_fails(component, target, opts, verdict, words):
    res = check(component, os.path.join(HOSTILE, target), examples=10, score_groups=True,
                **opts)
    assert res.verdict == verdict, res.message
    assert words in res.message
    data = gradescope_results(res)
    scores = {t["name"].split(": ", 1)[-1]: t["score"] for t in data["tests"]}
    assert data["score"] < sum(t["max_score"] for t in data["tests"]), scores
    if res.quantity == "output":
        assert scores["output"] == 0, scores


@pytest.mark.parametrize("component,target,opts", [
    ("ffn", "numpy_candidates.py:FeedForward", {"weight_layout": "in_out"}),   # cache on self
    ("layernorm", "numpy_candidates.py:layernorm_forward", {}),                # cache passed
    ("ffn", "torch_layers.py:PositionwiseFeedForward", {}),
    ("ffn", "cached_weight_products.py:KeyedCacheFeedForward", {"weight_layout": "in_out"}),  # rebuilt
])
def test_state_of_its_own_instance_is_allowed(component, target, opts):
    res = check(component, os.path.join(CANDS, target), examples=8, **opts)
    assert res.verdict == "match", res.message


def test_the_snapshot_names_a_replaced_function_and_ignores_new_names_and_classes(monkeypatch):
    snap = tamper.snapshot()
    assert "numpy" in snap and "array_equal" in snap["numpy"]
    assert tamper.replaced(snap) == []
    monkeypatch.setattr(np, "bool", bool)                # a class set on numpy: not watched
    monkeypatch.setattr(np, "made_up_helper", len, raising=False)
    assert tamper.replaced(snap) == []
    monkeypatch.setattr(np, "array_equal", lambda *a, **k: True)
    monkeypatch.setattr(sys.modules["json"], "dumps", lambda *a, **k: "{}")
    assert sorted(tamper.replaced(snap)) == ["json.dumps", "numpy.array_equal"]
    assert tamper.failure(tamper.replaced(snap))["verdict"] == "interface_error"
