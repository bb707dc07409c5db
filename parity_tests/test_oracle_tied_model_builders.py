"""A builder function returning a whole model that shares one vocabulary table between both
embeddings and the output projection: the table probe runs on the model the builder returns (not
only on a class), and the output projection's bias, under a name no list holds, is found beside the
tied table; a planted bug in the same model still fails."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("tied_model_builders.py")
TABLES = "one table for the source and target embeddings and the output projection"


@pytest.mark.parametrize("name, verdict", [
    ("build_tied_transformer", "match"),
    ("build_tied_transformer_BUG", "mismatch"),
])
def test_a_builder_of_a_tied_model_is_compared_as_tied(name, verdict):
    res = check("model", f"{FILE}:{name}", examples=12)
    assert res.verdict == verdict, render_text(res)
    assert any(TABLES in n for n in res.notes), res.notes
    assert "output_proj.bias <- last_linear.bias (the bias beside the tied output table)" in \
        res.mapping, res.mapping
