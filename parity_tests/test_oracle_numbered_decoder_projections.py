"""A decoder layer keeping both attentions' projections at its own level, numbered in the paper's
order (`W_q1` self, `W_q2` cross), has each placed in its attention; a cross-attention reading the
wrong input is still caught."""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "numbered_decoder_projections.py")


def test_numbered_self_and_cross_projections_are_placed():
    res = check("decoder_layer", f"{CANDS}:NumberedDecoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any(m.startswith("self_attn.q_proj.weight <- W_q1 ") for m in res.mapping), res.mapping
    assert any(m.startswith("cross_attn.k_proj.weight <- W_k2 ") for m in res.mapping), res.mapping


def test_a_cross_attention_reading_the_wrong_input_is_caught():
    res = check("decoder_layer", f"{CANDS}:NumberedDecoderLayerSelfKeys", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
