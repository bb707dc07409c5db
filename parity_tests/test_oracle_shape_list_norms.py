"""Norms built from a list or tuple of the normalised dimensions (`Norm(parameters_shape=[d_model])`,
`torch.ones(*dims)`, an argument annotated `list[int]`): the oracle passes [d_model], says so in the
notes, and compares as usual. Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def norms(candidate_file):
    return candidate_file("shape_list_norms.py")


@pytest.mark.parametrize("name,arg", [("ShapeListNorm", "dims"), ("ShapeTupleNorm", "normalized_dims"),
                                      ("AnnotatedWidthsNorm", "extent")])
def test_a_norm_taking_a_list_of_dimensions_matches(norms, name, arg):
    res = check("layernorm", f"{norms}:{name}", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any(f"{arg!r}: passed [d_model]" in n for n in res.notes), res.notes


@pytest.mark.parametrize("name", ["ShapeListNormBUG", "ShapeTupleNormBUG"])
def test_a_planted_bug_in_a_list_built_norm_is_a_mismatch(norms, name):
    res = check("layernorm", f"{norms}:{name}", examples=20, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
