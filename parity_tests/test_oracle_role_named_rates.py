"""Required dropout rates named for the block they act in (`attention_dropout_p`,
`mha_proj_dropout_p`, `mlp_dropout_p`) are rates, given 0.0, never a block of that role built from
the file's classes (which made `nn.Dropout(p=<a module>)` raise): the attention and the encoder
block built with them MATCH, the attention's planted wrong-scale twin stays a mismatch."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.submodules import role_of  # noqa: E402


@pytest.fixture
def rated(candidate_file):
    return candidate_file("role_named_rates.py")


@pytest.mark.parametrize("name", ["attention_dropout_p", "attn_drop", "mlp_dropout_p", "ffn_dropout",
                                  "attention_dropout_rate", "mlp_ratio"])
def test_rates_and_ratios_named_for_a_block_are_no_block(name):
    assert role_of(name) is None


@pytest.mark.parametrize("name, role", [("self_attention", "mha"), ("position_ff", "ffn"),
                                        ("attention_block", "mha"), ("mlp", "ffn")])
def test_block_names_keep_their_role(name, role):
    assert role_of(name) == role


def test_attention_with_rates_named_for_it_matches(rated):
    res = check("mha", f"{rated}:RatedSelfAttention", examples=10)
    assert res.verdict == "match", render_text(res)


def test_its_wrong_scale_twin_is_a_mismatch(rated):
    res = check("mha", f"{rated}:RatedSelfAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_an_encoder_block_with_rates_and_a_ratio_named_for_its_blocks_matches(rated):
    res = check("encoder_layer", f"{rated}:RatedEncoderBlock", examples=10)
    assert res.verdict == "match", render_text(res)
