"""A mask rank or a "keep" convention the instructor fixed (Options.declared) holds for layers
that want their mask in torch.nn.MultiheadAttention's form or spread over merged heads too: the
oracle hands masks over as declared there, as everywhere else, instead of adapting them (it did,
and such a layer matched under options it cannot take)."""
from __future__ import annotations

from parity_tests.oracle import check, render_text


def test_a_layer_handing_its_mask_to_torch_mha_is_not_adapted_when_keep_is_fixed(candidate_file):
    lib = candidate_file("tutorial_styles", "torch_library_style.py")
    res = check("mha", f"{lib}:Attention", examples=5, mask_convention="keep",
                declared=("mask_convention",))
    assert res.verdict != "match", render_text(res)
    assert not any("torch.nn.MultiheadAttention" in n and "handed over in torch's form" in n
                   for n in res.notes), res.notes


def test_attention_over_merged_heads_is_not_adapted_when_the_rank_is_fixed(candidate_file):
    path = candidate_file("merged_head_masks.py")
    res = check("mha", f"{path}:FoldedHeadsAttention", examples=5, mask_rank=4,
                declared=("mask_rank",), shrink=False)
    assert res.verdict != "match", render_text(res)
