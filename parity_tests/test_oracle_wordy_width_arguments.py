"""Constructor widths named in words no alias lists: `feed_forward_size`, `mlp_width` are the
feed-forward width (before, a name holding `feed_forward` was taken for a block to build, and an
instance was passed as a size), the other width takes d_model. Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.naming import names_d_ff  # noqa: E402
from parity_tests.oracle.reading.recognise.submodules import role_of  # noqa: E402


@pytest.fixture
def widths(candidate_file):
    return candidate_file("wordy_width_arguments.py")


def test_a_feed_forward_with_wordy_width_names_matches(widths):
    res = check("ffn", f"{widths}:WordyWidthFeedForward", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_the_wordy_feed_forward_is_a_mismatch(widths):
    res = check("ffn", f"{widths}:WordyWidthFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_width_words_name_sizes_not_blocks():
    assert names_d_ff("feed_forward_size") and names_d_ff("mlp_width") and names_d_ff("ff_dim")
    assert not names_d_ff("embedding_width") and not names_d_ff("feed_forward")
    assert role_of("feedforward_dimension") is None and role_of("attention_size") is None
    assert role_of("feed_forward") == "ffn" and role_of("self_attention_block") == "mha"
