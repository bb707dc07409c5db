"""Layers whose forward takes its inputs under the attention's role names (`forward(value, key,
query, mask)`, a decoder's `forward(x, value, key, src_mask, trg_mask)`): the encoder layer's
three get x, the decoder layer's key and value the memory (before, `key` found nothing left to
pass: an interface error). A planted bug in each is still caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "role_named_layer_inputs.py")

pytest.importorskip("torch")


@pytest.mark.parametrize("component,right,wrong", [
    ("encoder_layer", "Block", "BlockNoResidual"),
    ("decoder_layer", "CrossBlock", "CrossBlockOwnKeys"),
])
def test_role_named_layer_inputs_match_and_a_planted_bug_does_not(component, right, wrong):
    res = check(component, f"{CANDS}:{right}", examples=4)
    assert res.verdict == "match", render_text(res)
    assert any("role names" in n for n in res.notes), res.notes
    bad = check(component, f"{CANDS}:{wrong}", examples=8)
    assert bad.verdict == "mismatch", render_text(bad)
