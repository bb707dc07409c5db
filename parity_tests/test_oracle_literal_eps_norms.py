"""A LayerNorm written as a function with its epsilon a literal under the square root
(`np.sqrt(var + 1e-6)`) and no eps argument: the reference uses that eps and the report names the
gap `eps`, as it does for a class whose norms fix theirs. Before, such a function was MISMATCH by
about eps_difference / variance. Planted bugs (unbiased variance; eps outside the root): MISMATCH."""
from __future__ import annotations

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise.norm_eps import literal_eps

FILE = "literal_eps_norms.py"


def test_a_norm_function_with_a_literal_eps_matches_naming_it(candidate_file):
    res = check("layernorm", f"{candidate_file(FILE)}:layer_norm_literal_eps", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "NOT COMPARED (eps)" in text and "fixed in the function's text at 1e-06" in text, text


@pytest.mark.parametrize("name", ["layer_norm_literal_epsBUG", "layer_norm_eps_outsideBUG"])
def test_planted_bugs_in_literal_eps_norms_are_mismatches(candidate_file, name):
    res = check("layernorm", f"{candidate_file(FILE)}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_only_constants_added_under_a_square_root_are_read():
    import importlib.util
    spec = importlib.util.spec_from_file_location("literal_eps_norms", _path())
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert literal_eps(mod.layer_norm_literal_eps) == {1e-6}
    assert literal_eps(mod.layer_norm_literal_epsBUG) == {1e-6}       # through its helper
    assert literal_eps(mod.layer_norm_eps_outsideBUG) == set()


def _path():
    from parity_tests.conftest import candidate_path
    return candidate_path(FILE)
