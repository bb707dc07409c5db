"""One packed q|k|v projection whose rows are grouped by head (`qkv(x).reshape(B, T, H, 3 * d_k)`
then chunked): the oracle finds the layout by a probe, hands the reference's q, k, v weights over
interleaved head by head, reads their gradients back the same way, and the report says so. Planted
bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def grouped(candidate_file):
    return candidate_file("interleaved_qkv.py")


@pytest.mark.parametrize("comp,name", [("mha", "HeadGroupedAttention"),
                                       ("encoder_layer", "HeadGroupedEncoderLayer")])
def test_head_grouped_packed_qkv_matches(grouped, comp, name):
    res = check(comp, f"{grouped}:{name}", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("grouped by head" in n for n in res.notes), res.notes


@pytest.mark.parametrize("comp,name", [("mha", "HeadGroupedAttentionBUG"),
                                       ("encoder_layer", "HeadGroupedEncoderLayerBUG")])
def test_a_planted_bug_in_head_grouped_attention_is_a_mismatch(grouped, comp, name):
    res = check(comp, f"{grouped}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
