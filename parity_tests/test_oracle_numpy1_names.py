"""Code written for NumPy 1 loads under the grader's NumPy 2: the names NumPy 2 removed (`np.float_`,
`np.float`, `np.NaN`) are given their NumPy 1 meaning and the report says which; an attention with
torch's flat names (`out_proj_weight`, `out_proj_bias`) has its output projection found. Planted
bugs still fail, and a misspelt NumPy name still raises."""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading import numpy_removed_names

CANDS = os.path.join(candidate_path(), "numpy1_names.py")


def test_code_using_names_numpy_2_removed_is_loaded_and_compared():
    res = check("layernorm", f"{CANDS}:LegacyLayerNorm", examples=8)
    assert res.verdict == "match", render_text(res)
    note = next(n for n in res.notes if "NumPy 2 removed" in n)
    assert "np.float_ as np.float64" in note and "np.float as float" in note, note


def test_a_planted_bug_in_numpy_1_code_is_caught():
    res = check("layernorm", f"{CANDS}:LegacyLayerNormEpsOutside", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_the_removed_names_have_their_numpy_1_meaning_and_others_still_raise():
    numpy_removed_names.install()
    assert np.float_ is np.float64 and np.complex_ is np.complex128 and np.float is float
    assert np.isinf(np.Inf) and np.NINF == -np.inf and np.isnan(np.NaN)
    assert np.product is np.prod and np.bool is np.bool_     # NumPy 2's own name is left as it is
    with pytest.raises(AttributeError):
        np.flaot_  # noqa: B018 - a misspelt name is still NumPy's error
    assert numpy_removed_names.USED[:2] == ["float_", "complex_"]


def test_torch_flat_names_place_the_output_projection():
    res = check("mha", f"{CANDS}:FlatNamedAttention", examples=8)
    assert res.verdict == "match", render_text(res)
    bad = check("mha", f"{CANDS}:FlatNamedAttentionUnscaled", examples=12, shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)
