"""A NumPy attention with no biases: the oracle says its biases are absent only after walking all
the object holds (private attributes, dicts, lists, parts) and finding no array that could be one;
an output bias kept under a private name keeps the interface error, and a planted scale bug in the
biasless code is still a mismatch."""
from __future__ import annotations

import os

import numpy as np

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise import absent

CANDS = os.path.join(candidate_path(), "numpy_biasless_attention.py")


def test_a_numpy_attention_without_biases_is_compared():
    res = check("mha", f"{CANDS}:BiaslessAttention", examples=6)
    assert res.verdict == "match", render_text(res)
    assert "has no such parameter" in res.not_checked["grad_param:out_proj.bias"]
    assert "grad_param:out_proj.weight" not in res.not_checked


def test_a_planted_bug_in_biasless_numpy_attention_is_caught():
    res = check("mha", f"{CANDS}:BiaslessAttentionUnscaled", examples=20, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_biasless_attention_requiring_its_mask_is_read_as_x_at_w_and_a_bug_is_caught():
    # the (in, out) layout probe hands a required mask an all-attend one (None raises there)
    res = check("mha", f"{CANDS}:StrictMaskAttention", examples=6)
    assert res.verdict == "match", render_text(res)
    assert any("computes x @ W" in n for n in res.notes), res.notes
    bad = check("mha", f"{CANDS}:StrictMaskAttentionWrongAxis", examples=12, shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)


def test_a_layout_probe_that_raised_is_tried_again_so_correct_code_is_never_a_mismatch():
    res = check("mha", f"{CANDS}:PerHeadMaskAttention", examples=12)
    assert res.verdict == "raised", render_text(res)
    assert any("computes x @ W" in n for n in res.notes), res.notes


def test_a_bias_under_a_private_name_is_not_called_absent():
    res = check("mha", f"{CANDS}:HiddenBiasAttention", examples=4)
    assert res.verdict == "interface_error", render_text(res)
    assert "out_proj.bias" in render_text(res)


def test_the_walk_sees_private_names_dicts_and_lists_and_gives_up_past_its_bounds():
    class Part:
        pass
    p = Part()
    p._hidden, p.cache = np.zeros(3), {"g": [np.ones(2)]}
    assert sorted(a.shape for a in absent._numpy_arrays(p)) == [(2,), (3,)]
    deep = Part()
    cur = deep
    for _ in range(absent.WALK_DEPTH + 3):
        cur.child = Part()
        cur = cur.child
    assert absent._numpy_arrays(deep) is None
