"""A head count fixed by a module-level constant (`H = 4`, a constructor taking only d_model):
found by a probe (recognise/fixed_heads.py), every example drawn with that many heads and d_model
a multiple of it, the feed-forward's constant width found at those widths too, and the head count
named as the gap `sizes`. Before, d_model was drawn from 1 up and the candidate's own divisibility
check raised. Planted bugs stay MISMATCH; code that takes its head count is not called fixed."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.findings import Findings  # noqa: E402


@pytest.fixture
def heads(candidate_file):
    return candidate_file("fixed_head_counts.py")


def test_an_encoder_layer_with_module_constant_heads_matches_with_a_sizes_gap(heads):
    res = check("encoder_layer", f"{heads}:FixedHeadEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)
    assert "head count at 4" in res.gaps.get("sizes", ""), res.gaps
    assert any("module-level H = 4" in n for n in res.notes), res.notes


def test_a_planted_residual_there_is_a_mismatch(heads):
    res = check("encoder_layer", f"{heads}:FixedHeadEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_an_attention_asserting_its_constant_head_count_matches(heads):
    res = check("mha", f"{heads}:FixedHeadAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "head count at 2" in res.gaps.get("sizes", ""), res.gaps


def test_a_planted_scale_there_is_a_mismatch(heads):
    res = check("mha", f"{heads}:FixedHeadAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_code_taking_its_head_count_and_an_even_width_is_not_called_fixed(heads):
    res = check("mha", f"{heads}:EvenWidthAttention", examples=5)
    assert not any("head count is fixed" in n for n in res.notes), res.notes
    assert "sizes" not in res.gaps, res.gaps


def test_the_parent_takes_a_head_count_within_bounds_only():
    class Comp:
        masks = ()
    assert Findings.from_wire({"fixed_sizes": {"num_heads": 8}}, Comp, {}).fixed_sizes == {"num_heads": 8}
    for bad in (1, 33, True, "8"):
        assert Findings.from_wire({"fixed_sizes": {"num_heads": bad}}, Comp, {}).fixed_sizes == {}
