"""A LayerNorm class holding the library's under one attribute (`self.norm = nn.LayerNorm(...)`):
its weight and bias are found under that attribute. A planted bug stays MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def wrapped(candidate_file):
    return candidate_file("wrapped_library_norms.py")


def test_a_norm_wrapping_the_library_norm_matches(wrapped):
    res = check("layernorm", f"{wrapped}:WrappedLayerNorm", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_residual_in_that_norm_is_a_mismatch(wrapped):
    res = check("layernorm", f"{wrapped}:WrappedLayerNormBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
