"""Constructor sizes named as BERT's code names them: `hidden` (the model width) beside
`feed_forward_hidden` (the feed-forward width), `attn_heads` (the head count). Before, `hidden` took
the feed-forward width by its alias and the other two went by position, so the layer was built
with its sizes swapped (`d_model % h` asserted). A bare `hidden` with the model width named
otherwise is still the feed-forward width."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.name_words import names_d_ff, names_num_heads  # noqa: E402
from parity_tests.oracle.reading.signatures import bind  # noqa: E402

SIZES = [("d_model", ["d_model"], True), ("num_heads", ["num_heads"], False),
         ("d_ff", ["d_ff", "hidden"], True)]


@pytest.fixture
def widths(candidate_file):
    return candidate_file("hidden_named_widths.py")


def test_a_layer_sized_hidden_attn_heads_feed_forward_hidden_matches(widths):
    res = check("encoder_layer", f"{widths}:HiddenNamedEncoderLayer", examples=10)
    assert res.verdict == "match", render_text(res)


def test_its_planted_scale_bug_is_a_mismatch(widths):
    res = check("encoder_layer", f"{widths}:HiddenNamedEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_feed_forward_taking_d_model_and_hidden_keeps_hidden_as_its_width(widths):
    res = check("ffn", f"{widths}:HiddenWidthFeedForward", examples=10)
    assert res.verdict == "match", render_text(res)


def test_the_word_readers_and_the_binding():
    assert names_num_heads("attn_heads") and not names_num_heads("heads_dim")
    assert names_d_ff("feed_forward_hidden") and not names_d_ff("hidden")

    def layer(hidden, attn_heads, feed_forward_hidden):
        pass

    def ffn(d_model, hidden):
        pass

    assert bind(layer, SIZES).arg_of == {"d_model": "hidden", "num_heads": "attn_heads",
                                         "d_ff": "feed_forward_hidden"}
    assert bind(ffn, SIZES).arg_of["d_ff"] == "hidden"
