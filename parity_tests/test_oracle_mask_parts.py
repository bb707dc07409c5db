"""A decoder layer taking its masks in parts named for what they are (`tgt_pad_mask`,
`tgt_causal_mask`, `memory_pad_mask`): each part is cut from the oracle's mask of the example and
filled by its name, masks no such parts can say are listed as not compared, correct code matches and
planted bugs in how the parts are used stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.name_words import mask_part  # noqa: E402


@pytest.fixture
def parts(candidate_file):
    return candidate_file("mask_parts_layers.py")


@pytest.mark.parametrize("name,meaning", [("tgt_pad_mask", "padding_mask:self"),
                                          ("tgt_autoregressive_mask", "causal_mask:self"),
                                          ("memory_pad_mask", "padding_mask:memory"),
                                          ("src_key_padding_mask", "padding_mask:memory"),
                                          ("mask", None), ("pad_idx", None)])
def test_mask_parts_are_read_from_their_names(name, meaning):
    assert mask_part(name) == meaning


def test_a_layer_taking_its_masks_in_parts_matches(parts):
    res = check("decoder_layer", f"{parts}:PartsDecoderLayer", examples=25)
    assert res.verdict == "match", render_text(res)
    assert any("the causal part of self_mask" in n for n in res.notes), res.notes
    assert "random_2d" in res.gaps.get("masks", ""), res.gaps


@pytest.mark.parametrize("name", ["PartsDecoderLayerNoCausal", "PartsDecoderLayerMemoryPadIgnored"])
def test_a_part_misused_is_a_mismatch(parts, name):
    res = check("decoder_layer", f"{parts}:{name}", examples=60, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
