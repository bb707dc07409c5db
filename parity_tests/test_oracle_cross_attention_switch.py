"""Decoder layers whose library-style config switches the cross-attention on (`add_cross_attention`,
`is_decoder`, both off by default): checked as decoder_layer, the config is built with the switch
on, so the layer has the cross-attention the component compares, and the report says so. A
planted bug stays MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def switched(candidate_file):
    return candidate_file("switched_cross_attention.py")


@pytest.mark.parametrize("name,switch", [("CrossSwitchDecoderLayer", "add_cross_attention"),
                                         ("RoleSwitchDecoderLayer", "is_decoder"),
                                         ("DataclassSwitchDecoderLayer", "add_cross_attention")])
def test_a_decoder_layer_gets_its_cross_attention_switched_on(switched, name, switch):
    res = check("decoder_layer", f"{switched}:{name}", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any(f"{switch}=True" in n for n in res.notes), res.notes


def test_a_planted_bug_in_the_switched_on_cross_attention_is_a_mismatch(switched):
    res = check("decoder_layer", f"{switched}:CrossSwitchDecoderLayerBUG", examples=20, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
