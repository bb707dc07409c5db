"""Attention projections kept at the layer's own level and named for their role (`self_q`,
`cross_k`, `W_q_self`): placed by their names (recognise/flat_roles.py), compared as usual; planted
bugs stay mismatches, and the mapping line says how each weight was placed."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("role_named_projections.py")


@pytest.mark.parametrize("comp,name,settings", [
    ("decoder_layer", "RoleNamedDecoderLayer", {}),
    ("encoder_layer", "RoleNamedNumpyEncoderLayer", {}),
])
def test_role_named_projections_are_placed_and_match(comp, name, settings):
    res = check(comp, f"{FILE}:{name}", examples=12, settings=settings)
    assert res.verdict == "match", render_text(res)
    assert any("named for its role" in m for m in res.mapping), res.mapping


@pytest.mark.parametrize("comp,name", [("decoder_layer", "RoleNamedDecoderLayerBUG"),
                                       ("encoder_layer", "RoleNamedNumpyEncoderLayerBUG")])
def test_a_planted_bug_behind_role_named_projections_is_a_mismatch(comp, name):
    res = check(comp, f"{FILE}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
