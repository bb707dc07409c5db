"""Attention that folds the heads into the batch axis and wants its mask spread over it,
(batch*heads, Tq, Tk), batch-major: the oracle finds the layout by probing, hands every mask over so
(the report says it), and reaches MATCH on correct code; planted bugs stay MISMATCH, and a candidate
that ignores its mask is not switched into that layout."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

NOTE = "spread over the merged batch*heads axis"


@pytest.fixture
def folded(candidate_file):
    return candidate_file("merged_head_masks.py")


def test_attention_wanting_a_merged_heads_mask_matches(folded):
    res = check("mha", f"{folded}:FoldedHeadsAttention", examples=30)
    assert res.verdict == "match", render_text(res)
    assert any(NOTE in n for n in res.notes), res.notes


def test_unscaled_scores_under_a_merged_heads_mask_are_a_mismatch(folded):
    res = check("mha", f"{folded}:FoldedHeadsAttentionNoScale", examples=30, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_mask_taken_and_ignored_is_a_mismatch_not_a_layout(folded):
    res = check("mha", f"{folded}:FoldedHeadsAttentionMaskIgnored", examples=40)
    assert res.verdict == "mismatch", render_text(res)
    assert not any(NOTE in n for n in res.notes), res.notes
