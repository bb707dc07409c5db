"""Layers whose forward takes its inputs as the attention's single letters (`forward(q, k, v,
mask)`, a decoder's `forward(q, k, v, src_mask, tgt_mask)`): the encoder layer's three get x, the
decoder layer's k and v the memory (before, `k` found nothing left to pass: an interface error).
A planted bug in each is still caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "letter_named_layer_inputs.py")

pytest.importorskip("torch")


@pytest.mark.parametrize("component,right,wrong,given", [
    ("encoder_layer", "EncBlock", "EncBlockFeedsAttention", "q=x, k=x, v=x"),
    ("decoder_layer", "DecBlock", "DecBlockCrossFromInput", "q=x, k=memory, v=memory"),
])
def test_letter_named_layer_inputs_match_and_a_planted_bug_does_not(component, right, wrong, given):
    res = check(component, f"{CANDS}:{right}", examples=4)
    assert res.verdict == "match", render_text(res)
    assert any("role names" in n and given in n for n in res.notes), res.notes
    bad = check(component, f"{CANDS}:{wrong}", examples=8, shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)
