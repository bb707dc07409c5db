"""A "feed-forward" that holds no weights at all (only an activation, or the identity): the check
stops with an interface error that says the candidate has no parameters and names the
reference's matrices it lacks; never an oracle error, never a match."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.mark.parametrize("name", ["ActivationOnlyFeedForward", "IdentityFeedForward"])
def test_a_feed_forward_without_weights_is_told_so(candidate_file, name):
    res = check("ffn", f"{candidate_file('weightless_feed_forwards.py')}:{name}", examples=4)
    assert res.verdict == "interface_error", render_text(res)
    text = render_text(res)
    assert "holds no parameters or weight arrays at all" in text and "linear1.weight" in text, text
