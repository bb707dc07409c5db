"""Dropout rates under names that do not say so (`p_d`, `rate`), handed to `nn.Dropout` in the
constructor: read from the constructor's text and given 0.0 like every named rate. Before, they kept
their 0.1 default and the train() run called correct code MISMATCH. A rate fixed in the code is the
candidate's own and still shows."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.dropout_args import dropout_fed  # noqa: E402


@pytest.fixture
def rates(candidate_file):
    return candidate_file("unnamed_dropout_rates.py")


def test_a_feed_forward_with_an_unnamed_dropout_rate_matches(rates):
    res = check("ffn", f"{rates}:UnnamedRateFeedForward", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("'p_d': passed 0.0" in n for n in res.notes), res.notes


def test_a_layer_with_an_unnamed_dropout_rate_matches(rates):
    res = check("encoder_layer", f"{rates}:UnnamedRateEncoderLayer", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_dropout_rate_fixed_in_the_code_is_still_a_mismatch(rates):
    res = check("ffn", f"{rates}:FixedRateFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_arguments_handed_to_a_dropout_are_read_from_the_constructor():
    from torch import nn

    class Block(nn.Module):
        def __init__(self, d_model, pd=0.1, keep=0.5):
            super().__init__()
            self.a = nn.Dropout(pd)
            self.b = nn.functional.dropout
            self.c = nn.Linear(d_model, d_model)

    assert dropout_fed(Block) == {"pd"}
