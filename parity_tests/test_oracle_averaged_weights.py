"""Attention that returns its weights averaged over the heads, (B, Tq, Tk), as torch's own
MultiheadAttention does by default: compared with the reference's mean over heads at every head
count, one head included (where the mean is the head itself), never called WRONG_SHAPE; a wrong
pooling of the weights is still a MISMATCH. The report's "compared:" line says the weights were
compared as the mean over the heads."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def averaged(candidate_file):
    return candidate_file("averaged_weights.py")


@pytest.mark.parametrize("heads", [None, "1"])
def test_weights_averaged_over_the_heads_match(averaged, heads):
    res = check("mha", f"{averaged}:HeadMeanAttention", examples=20,
                **({"settings": {"num_heads": 1}} if heads else {}))
    assert res.verdict == "match", render_text(res)
    compared = next(line for line in render_text(res).splitlines() if "compared:" in line)
    assert "attention_weights (as the mean over the heads" in compared, compared


def test_the_largest_weight_over_the_heads_is_a_mismatch_on_the_weights(averaged):
    res = check("mha", f"{averaged}:HeadMaxAttention", examples=30)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert "attention weights" in text
