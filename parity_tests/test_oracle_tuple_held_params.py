"""NumPy parts keeping (weight, bias) pairs as tuples in a list (`self.norms = [(gain, shift),
...]`, `self.layers = [(W1, b1), (W2, b2)]`): their arrays are found and written in place (they
were invisible, an interface error naming every norm); planted bugs stay mismatches."""
from __future__ import annotations

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text

FILE = candidate_path("tuple_held_params.py")


@pytest.mark.parametrize("comp,name,settings", [("ffn", "TupleFeedForward", {}),
                                                ("decoder_layer", "TupleNormPreNormDecoderLayer",
                                                 {"norm_first": True})])
def test_pairs_kept_as_tuples_are_found(comp, name, settings):
    res = check(comp, f"{FILE}:{name}", examples=12, settings=settings)
    assert res.verdict == "match", render_text(res)


@pytest.mark.parametrize("comp,name,settings", [("ffn", "TupleFeedForwardBUG", {}),
                                                ("decoder_layer", "TupleNormPreNormDecoderLayerBUG",
                                                 {"norm_first": True})])
def test_a_planted_bug_beside_tuple_pairs_is_a_mismatch(comp, name, settings):
    res = check(comp, f"{FILE}:{name}", examples=25, settings=settings, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
