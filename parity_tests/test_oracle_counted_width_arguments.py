"""A feed-forward whose widths are named as counts of units (`FeedForward(n_input, n_hidden,
n_output)`) gets d_model for `n_input` (an input width, before `n_hidden`, which then takes d_ff)
and for `n_output`, said in a note; before, the constructor could not be called ("parameter
'n_output' is required, but the oracle has nothing left to pass"), and `n_hidden`, a model-width
alias, took d_model. Planted bug: MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "counted_width_feed_forward.py"


def test_an_output_count_gets_the_model_width(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:UnitCountFeedForward", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "constructor argument 'n_output': passed d_model" in text, text


def test_the_planted_bug_behind_counted_widths_is_a_mismatch(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:UnitCountFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
