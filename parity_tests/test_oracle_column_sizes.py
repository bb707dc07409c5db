"""Sizes named as matrix columns are read by their words: `in_columns` is d_model, an
`intermediate_columns` or `ff_intermediate_columns` d_ff, `out_columns` the output width
(d_model). Before, a feed-forward `(in_columns, intermediate_columns, out_columns)` was handed
d_ff and d_model by position and nothing for `out_columns` (INTERFACE_ERROR). Planted bug (the
activation applied to the output too): MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "column_sizes.py"


def test_a_feed_forward_sized_in_columns_matches(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:ColumnsFeedForward", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "by position" not in text, text


def test_a_feed_forward_sized_in_columns_with_a_bug_is_a_mismatch(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:ColumnsFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_column_words_name_the_widths():
    from parity_tests.oracle.reading.name_words import names_d_ff, names_d_model
    from parity_tests.oracle.reading.recognise.arg_meaning import _names_out_width
    assert names_d_model("in_columns") and not names_d_model("intermediate_columns")
    assert names_d_ff("intermediate_columns") and names_d_ff("ff_intermediate_columns")
    assert _names_out_width("out_columns") and not names_d_model("out_columns")
    assert not names_d_model("in_channels")
