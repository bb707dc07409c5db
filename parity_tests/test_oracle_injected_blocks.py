"""Layers assembled from blocks handed to their constructor under names the oracle's role table
does not hold (`mixing_attention`, `pointwise_net`), widths called `model_dimension`, a
feed-forward whose width is fixed by its code, and norms inside residual wrappers: the oracle
builds the blocks from the file's own classes, finds where they sit, places the norms, and reaches
a verdict on the computation. Planted bugs stay MISMATCH; the pre-norm twin is found pre-norm by
behaviour and matches as such, and fails an assignment that fixes post-norm."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def blocks(candidate_file):
    return candidate_file("injected_blocks.py")


def test_a_feed_forward_taking_model_dimension_matches(blocks):
    res = check("ffn", f"{blocks}:PointwiseNet", examples=10)
    assert res.verdict == "match", render_text(res)
    assert not any("'model_dimension': passed d_ff" in n for n in res.notes), res.notes


def test_heads_after_a_width_named_for_the_model_still_take_the_head_count(blocks):
    res = check("mha", f"{blocks}:CountedHeadsAttention", examples=25)
    assert res.verdict == "match", render_text(res)


@pytest.mark.parametrize("comp,name", [("encoder_layer", "InjectedEncoderLayer"),
                                       ("decoder_layer", "InjectedDecoderLayer")])
def test_a_layer_built_around_blocks_it_is_given_matches(blocks, comp, name):
    res = check(comp, f"{blocks}:{name}", examples=12)
    text = render_text(res)
    assert res.verdict == "match", text
    built = [n for n in res.notes if "built a " in n]
    assert any("'mixing_attention'" in n and "HeadedAttention" in n for n in built), built
    assert any("'pointwise_net'" in n and "PointwiseNet" in n for n in built), built


@pytest.mark.parametrize("comp,name", [("encoder_layer", "InjectedEncoderLayerNoResidual"),
                                       ("decoder_layer", "InjectedDecoderLayerSwapped")])
def test_a_planted_bug_in_such_a_layer_is_a_mismatch(blocks, comp, name):
    res = check(comp, f"{blocks}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_pre_norm_twin_is_checked_as_pre_norm_and_fails_a_post_norm_assignment(blocks):
    # its feed-forward width is fixed by its code: the norm order is probed at that width (it was
    # probed at the search's d_ff, failed silently, and the layer was compared as post-norm)
    name = f"{blocks}:InjectedEncoderLayerPreNorm"
    res = check("encoder_layer", name, examples=12)
    assert res.verdict == "match" and any("normalises before each sublayer" in n for n in res.notes), \
        render_text(res)
    post = check("encoder_layer", name, examples=12, settings={"norm_first": False}, shrink=False)
    assert post.verdict == "mismatch", render_text(post)
