"""NumPy attention whose constructor leaves its weights unusable (np.empty memory, NaN
placeholders) and masks the future itself: the probe finding that masking runs on drawn finite
weights written through the weight slots, so the correct class is MATCH (checked as causal), while
its stored -inf table stays as built. A planted scale by d_k stays MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text


@pytest.fixture
def attention(candidate_file):
    return candidate_file("uninitialised_weights.py")


@pytest.mark.parametrize("name", ["PlaceholderWeightsAttention", "EmptyWeightsAttention"])
def test_attention_with_unloaded_weights_is_found_causal_and_matches(attention, name):
    res = check("mha", f"{attention}:{name}", examples=6)
    assert res.verdict == "match", render_text(res)
    assert any("masks the future itself" in n for n in res.notes), res.notes


def test_a_planted_scale_bug_beside_unloaded_weights_is_a_mismatch(attention):
    res = check("mha", f"{attention}:PlaceholderWeightsAttention_BUG", examples=6, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
