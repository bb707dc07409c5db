"""Gradients found by behaviour are told apart by name also when the parameter's name has several
words: `cache["dw_q"]` is the gradient of `w_q`, `cache["dw_k"]` of `w_k` (a NumPy attention
whose backward keeps them so, arrays of one shape). Before, only single-word names were read
(`dW` for `W`): the three were left unread or taken in the wrong order."""
from __future__ import annotations

import numpy as np

from parity_tests.oracle.reading.recognise import grad_behaviour as gb


def test_multiword_parameter_names_tell_same_shaped_gradients_apart():
    rng = np.random.default_rng(0)
    after = {f"cache.d{n}": rng.standard_normal((1, 4, 2)) for n in ("w_v", "w_q", "w_k")}
    before = {p: np.zeros((1, 4, 2)) for p in after}
    want = {"w_q": (1, 4, 2), "w_k": (1, 4, 2), "w_v": (1, 4, 2)}
    found, unsure = gb.find(before, after, want, set(want), [], None)
    assert not unsure
    assert {c: p for c, (p, _, _) in found.items()} == {
        "w_q": "cache.dw_q", "w_k": "cache.dw_k", "w_v": "cache.dw_v"}
    assert sum(how == "by its name" for _, _, how in found.values()) >= 2      # the last by elimination


def test_a_multiword_name_is_not_read_into_another_parameter():
    assert gb._named_for("cache.dw_q", "w_q") and gb._named_for("grads.grad_w_out", "w_out")
    assert not gb._named_for("cache.dw_q", "w_k") and not gb._named_for("cache.dw_qk", "w_q")
