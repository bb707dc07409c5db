"""Attention kept as one matrix per head, stacked (H, d, d_head) or (H, 1, d, d_head)
(recognise/head_axes), beside a bare square output projection used as `z @ W_o` (recognise/layout
reads its layout with the stacked ones fixed by their shapes), and in an encoder layer whose
feed-forward is nn.Linear even when every matrix is square (recognise/class_layout, now also in the
worker); a required constructor flag named in words (`mask_future_positions`,
signatures.is_causal_flag) is built False, and True in the causal run. Right code matches, the
planted twins do not."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("stacked_head_weights.py")


@pytest.mark.parametrize("comp,name,settings", [
    ("mha", "StackedHeadAttention", {}),
    ("mha", "UnitAxisHeadAttention", {}),
    ("mha", "FutureFlagAttention", {}),
    ("encoder_layer", "StackedHeadEncoderLayer", {}),
    ("encoder_layer", "StackedHeadEncoderLayer", {"d_model": 8, "d_ff": 8, "num_heads": 2}),
])
def test_stacked_head_weights_match(comp, name, settings):
    res = check(comp, f"{FILE}:{name}", examples=15, settings=settings)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "computes x @ W" in text, text                 # the square output projection, read so
    assert any("heads on axes of their own" in m for m in res.mapping), res.mapping


def test_a_required_flag_named_in_words_is_exercised():
    res = check("mha", f"{FILE}:FutureFlagAttention", examples=8)
    assert "'mask_future_positions': a required causal flag" in render_text(res)
    bug = check("mha", f"{FILE}:FutureFlagAttentionBUG", examples=15, shrink=False)
    assert bug.verdict == "mismatch", render_text(bug)


@pytest.mark.parametrize("comp,name", [("mha", "StackedHeadAttentionBUG")])
def test_a_planted_bug_behind_stacked_heads_is_a_mismatch(comp, name):
    res = check(comp, f"{FILE}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
