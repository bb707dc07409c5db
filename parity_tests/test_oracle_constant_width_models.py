"""A whole model whose feed-forward width is a module-level constant (`D_FF = 40`, no d_ff in its
constructor): the ffn_width probe builds whole models too, so every example is drawn with that
width and the report names it as the gap `sizes`, with a fixed head count beside it (fixed_heads)
as well. Before, a model was never probed: no reference weight fitted its (40, d_model) matrices
and the check ended INTERFACE_ERROR. A planted bug stays a mismatch. A model whose embeddings are
not scaled by sqrt(d_model) is a mismatch whose report names that likely cause and the --set that
asks for it (core/diagnose: a model's switches flipped one at a time); the right model gets no
such hint."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.ffn_width import _hidden  # noqa: E402

FILE = candidate_path("constant_width_models.py")


def test_a_model_with_a_constant_feed_forward_width_matches_with_a_sizes_gap():
    res = check("model", f"{FILE}:ConstantWidthSeq2Seq", examples=8)
    assert res.verdict == "match", render_text(res)
    assert "40" in res.gaps.get("sizes", ""), res.gaps
    assert any("feed-forward width is fixed by the candidate's code at 40" in n for n in res.notes), res.notes


def test_a_planted_bug_in_that_model_stays_a_mismatch():
    res = check("model", f"{FILE}:ConstantWidthSeq2SeqBUG", examples=25)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)
    assert not any("embeddings" in n for n in res.notes if n.startswith("likely cause")), res.notes


def test_unscaled_embeddings_are_a_mismatch_naming_the_likely_cause():
    res = check("model", f"{FILE}:UnscaledConstantWidthSeq2Seq", examples=10)
    assert res.verdict == "mismatch", render_text(res)
    hint = [n for n in res.notes if n.startswith("likely cause")]
    assert hint and "not multiplied by sqrt(d_model) (--set scale_embeddings=false)" in hint[0], res.notes


def test_a_model_fixing_its_head_count_and_width_matches_naming_both():
    res = check("model", f"{FILE}:ConstantSizesSeq2Seq", examples=8)
    assert res.verdict == "match", render_text(res)
    sizes = res.gaps.get("sizes", "")
    assert "head count at 4" in sizes and "40" in sizes, res.gaps


def test_vocabulary_tables_are_no_hidden_width():
    # an output projection kept as x @ W (d, V) beside the embedding table (V, d) pairs like an
    # up and a down projection; the probe sets the vocabulary sizes aside for models
    assert _hidden([(5, 4), (4, 5), (40, 4), (4, 40)], 4) == {5, 40}
