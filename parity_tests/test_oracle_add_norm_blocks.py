"""Attention and feed-forward blocks that do Add & Norm themselves: checked alone as mha/ffn, the
interface error names the norm and points to encoder_layer (never the reference's biases the block
may lack); checked as part of a layer they are compared."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise import add_norm_block  # noqa: E402

FILE = candidate_path("add_norm_blocks.py")


@pytest.mark.parametrize("component,name", [("mha", "NormedAttention"),
                                            ("mha", "NormedAttentionBiased"),
                                            ("ffn", "NormedFeedForward")])
def test_block_with_norm_inside_names_the_norm(component, name):
    res = check(component, f"{FILE}:{name}", examples=3)
    assert res.verdict == "interface_error", render_text(res)
    assert "norm" in res.message and "encoder_layer" in res.message, res.message
    assert "cannot tell where" not in res.message, res.message   # not "the biases are missing"


def test_layer_built_from_such_blocks_is_compared():
    res = check("encoder_layer", f"{FILE}:NormedBlocksLayer", examples=5)
    assert res.verdict == "match", render_text(res)
    bad = check("encoder_layer", f"{FILE}:NormedBlocksLayerNoResidual", examples=25, shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)


def test_message_only_for_blocks_with_a_norm():
    shapes = {"layer_norm.weight": (4,), "w_qs.weight": (4, 4)}
    msg = add_norm_block.message("mha", ["layer_norm.weight"], shapes)
    assert msg and "layer_norm.weight (4,)" in msg and "encoder_layer" in msg
    assert add_norm_block.message("mha", ["w_qs.weight"], shapes) is None
    assert add_norm_block.message("encoder_layer", ["layer_norm.weight"], shapes) is None
    assert add_norm_block.message("ffn", ["ln_1.weight"], {"ln_1.weight": (4,)})
