"""A feed-forward kept (in, out) with square matrices (d_ff = d_model): shapes cannot tell the
layout, a probe does (b1 far positive: the output is (x A + c) C or (x A.T + c) C.T); the report
says so, and a wrong candidate still fails."""
from __future__ import annotations

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text

FILE = candidate_path("dense_parts.py")


def test_square_in_out_feed_forward_matches():
    res = check("ffn", f"{FILE}:DenseFeedForward", examples=5, settings={"d_ff": 4, "d_model": 4})
    assert res.verdict == "match", render_text(res)
    assert any("x @ W in its feed-forward" in n for n in res.notes), res.notes


def test_mixed_sizes_match_with_the_natural_command():
    res = check("ffn", f"{FILE}:DenseFeedForward", examples=25)
    assert res.verdict == "match", render_text(res)


@pytest.mark.parametrize("settings", [{"d_ff": 4, "d_model": 4}, {}])
def test_wrong_activation_is_still_a_mismatch(settings):
    res = check("ffn", f"{FILE}:DenseFeedForwardLeaky", examples=25, settings=settings, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_square_in_out_feed_forward_without_biases_matches():
    # no b1 to shift the hidden units with: the probe uses positive inputs and a positive W1
    res = check("ffn", f"{FILE}:BiasFreeFeedForward", examples=5, settings={"d_ff": 4, "d_model": 4})
    assert res.verdict == "match", render_text(res)
    assert any("x @ W in its feed-forward" in n for n in res.notes), res.notes


def test_wrong_activation_without_biases_is_still_a_mismatch():
    res = check("ffn", f"{FILE}:BiasFreeFeedForwardLeaky", examples=25,
                settings={"d_ff": 4, "d_model": 4}, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
