"""`hidden_size` beside `d_model` and a head count is each head's width (construct._per_head_sizes: it
used to take d_model by its alias list, leaving `d_model` with nothing to pass, or a boolean by
position), also `d_hidden` (elsewhere a feed-forward width) in an attention taking `(d_model,
n_heads, d_hidden)`, which was an interface error ("nothing left to pass"), and a feed-forward
written as kernel-size-1 convolutions `conv1` / `conv2` with inner width `conv_hidden_dim`
(name_words.FF_WORDS, trees.L1 / L2). Right code matches; the planted twin does not."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("per_head_width_names.py")


@pytest.mark.parametrize("comp,name", [("mha", "WidthPerHeadAttention"),
                                       ("encoder_layer", "ConvFeedForwardEncoderLayer")])
def test_sizes_told_apart_by_their_company_match(comp, name):
    res = check(comp, f"{FILE}:{name}", examples=15)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "'hidden_size': beside 'd_model' and the head count" in text, text


def test_a_planted_bug_behind_a_per_head_width_is_a_mismatch():
    res = check("mha", f"{FILE}:WidthPerHeadAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_d_hidden_beside_d_model_and_heads_in_an_attention_is_each_heads_width():
    res = check("mha", f"{FILE}:HiddenPerHeadAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("'d_hidden': beside 'd_model' and the head count" in n for n in res.notes), res.notes


def test_a_planted_bug_behind_d_hidden_is_a_mismatch():
    res = check("mha", f"{FILE}:HiddenPerHeadAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
