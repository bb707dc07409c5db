"""A whole model from a builder taking a source and a target length (both upper bounds: each
sizes its side's positional table) whose output projection is a Linear in a part of its own under a
name no list holds (`projection_layer.proj`): both lengths get the bound, the projection is placed
by its shape and an output word, and the model is compared; a planted bug still fails."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.signatures import HYPER_ALIASES, bind  # noqa: E402

FILE = candidate_path("side_length_builders.py")


@pytest.mark.parametrize("name, verdict", [
    ("build_side_length_transformer", "match"),
    ("build_side_length_transformer_BUG", "mismatch"),
])
def test_side_lengths_and_a_projection_part_are_placed(name, verdict):
    res = check("model", f"{FILE}:{name}", examples=8)
    assert res.verdict == verdict, render_text(res)
    assert not any("by position" in n for n in res.notes), res.notes


def test_a_second_length_argument_takes_the_bound_too():
    def build(src_vocab_size, tgt_vocab_size, src_seq_len, tgt_seq_len, d_model, n_layers):
        return None
    sources = [(s, HYPER_ALIASES[s], False) for s in
               ("d_model", "src_vocab", "tgt_vocab", "max_len", "num_layers")]
    b = bind(build, sources)
    assert b.positional[2:4] == ["max_len", "max_len"], b.describe()
    assert b.positional[5] == "num_layers", b.describe()


def test_an_argument_defaulting_to_none_keeps_its_default():
    def build(d_model, max_len, position=None, max_length=64):
        return None
    sources = [(s, HYPER_ALIASES[s], False) for s in ("d_model", "max_len")]
    b = bind(build, sources)
    assert b.positional == ["d_model", "max_len"], b.describe()
    assert "position" not in b.keywords and b.keywords.get("max_length") == "max_len", b.describe()
