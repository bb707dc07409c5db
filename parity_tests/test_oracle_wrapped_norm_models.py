"""A whole model whose layers keep their norms in residual steps under names no table holds
(`encoder_layers.0.attn_step.ln.gain`): inside the model they are matched to norm1..3 by
registration order, layer by layer, as for a layer checked alone (before, "cannot tell where the
candidate keeps encoder.layers.0.norm1.weight": an interface error). A planted bug is still
caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "wrapped_norm_models.py")

pytest.importorskip("torch")


def test_a_model_with_norms_in_residual_steps_matches_by_registration_order():
    res = check("model", f"{CANDS}:Seq2Seq", examples=4)
    assert res.verdict == "match", render_text(res)
    assert any(m.startswith("decoder.layers.0.norm3.weight <- decoder_layers.0.feed_step.ln.gain")
               for m in res.mapping), res.mapping


def test_a_planted_bug_in_a_model_with_wrapped_norms_is_a_mismatch():
    res = check("model", f"{CANDS}:Seq2SeqUnscaled", examples=6, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
