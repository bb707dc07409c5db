"""Attention that returns its weights averaged over the heads, (B, Tq, Tk), as torch's own
MultiheadAttention does by default: compared with the reference's mean over heads at every head
count, one head included (where the mean is the head itself), never called WRONG_SHAPE; a wrong
pooling of the weights is still a MISMATCH."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402

FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_candidates",
                    "averaged_weights.py")


@pytest.mark.parametrize("heads", [None, "1"])
def test_weights_averaged_over_the_heads_match(heads):
    res = check("mha", f"{FILE}:HeadMeanAttention", examples=20,
                **({"settings": {"num_heads": 1}} if heads else {}))
    assert res.verdict == "match", render_text(res)
    compared = next(line for line in render_text(res).splitlines() if "compared:" in line)
    assert "attention_weights" in compared, compared


def test_the_largest_weight_over_the_heads_is_a_mismatch_on_the_weights():
    res = check("mha", f"{FILE}:HeadMaxAttention", examples=30)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert "attention weights" in text
