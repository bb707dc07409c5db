"""A packed q|k|v projection under a name no table holds (`joint`, `proj_in`, a bare `Wx`): the
oracle finds it by its (3*d_model, d_model) or (d_model, 3*d_model) shape, says so in the mapping,
then reads its rows (plain thirds or grouped by head, by probing) and, for a bare (in, out) packed
matrix, the square output projection's layout by the layout probe. Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def packed(candidate_file):
    return candidate_file("unnamed_packed_qkv.py")


@pytest.mark.parametrize("comp,name", [("mha", "JointProjectionAttention"),
                                       ("mha", "RawPackedAttention"),
                                       ("encoder_layer", "JointProjectionEncoderLayer")])
def test_a_packed_projection_no_name_places_is_found_by_its_shape(packed, comp, name):
    res = check(comp, f"{packed}:{name}", examples=12)
    assert res.verdict == "match", render_text(res)
    assert any("found by its shape" in str(m) for m in res.mapping), res.mapping


def test_an_unnamed_packed_projection_grouped_by_head_matches(packed):
    res = check("mha", f"{packed}:HeadGroupedJointAttention", examples=12)
    assert res.verdict == "match", render_text(res)
    assert any("grouped by head" in n for n in res.notes), res.notes


def test_an_in_out_packed_matrix_leaves_the_square_output_projection_to_the_probe(packed):
    res = check("mha", f"{packed}:RawPackedAttention", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any("x @ W" in n for n in res.notes), res.notes


@pytest.mark.parametrize("comp,name", [("mha", "JointProjectionAttentionBUG"),
                                       ("mha", "RawPackedAttentionBUG"),
                                       ("mha", "HeadGroupedJointAttentionBUG"),
                                       ("encoder_layer", "JointProjectionEncoderLayerBUG")])
def test_a_planted_bug_behind_an_unnamed_packed_projection_is_a_mismatch(packed, comp, name):
    res = check(comp, f"{packed}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
