"""An output width named as a count with a prefix (`mlp_num_outputs`, `proj_n_out`) is d_model, and
a name with a count word is never a block to build: `CountedMLP(input_dim, mlp_num_hiddens,
mlp_num_outputs)` was built with a feed-forward block for `mlp_num_outputs` (its block word) and
could not be constructed. Names whose outputs are something else (`num_output_heads`,
`n_output_classes`) are not read so. Planted bug: MISMATCH."""
from __future__ import annotations

import inspect

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.name_words import names_d_ff
from parity_tests.oracle.reading.recognise import arg_meaning
from parity_tests.oracle.reading.recognise.base import MISSING, BuildContext
from parity_tests.oracle.reading.recognise.submodules import role_of

FILE = "counted_output_widths.py"


def test_a_prefixed_output_count_gets_the_model_width(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:CountedMLP", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "constructor argument 'mlp_num_outputs': passed d_model" in text, text
    assert "'mlp_num_hiddens': passed d_ff by position" not in text, text


def test_the_planted_bug_behind_a_prefixed_output_count_is_a_mismatch(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:CountedMLPBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def _value(name: str):
    ctx = BuildContext(module=None, framework="torch", order=("d_model", "d_ff"),
                       build=lambda c, v, o: None)
    param = inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return arg_meaning.value(ctx, param, {"d_model": 6, "d_ff": 10})


@pytest.mark.parametrize("name", ["mlp_num_outputs", "ffn_num_outputs", "proj_n_out",
                                  "block_number_output", "layer_d_out", "fc_num_outputs"])
def test_output_counts_and_prefixed_widths_are_the_model_width(name):
    assert _value(name) == 6
    assert role_of(name) is None


@pytest.mark.parametrize("name", ["num_output_heads", "n_output_classes", "num_outputs_per_head",
                                  "mlp_outputs", "output_layer", "n_out_layers"])
def test_outputs_meaning_something_else_are_not_a_width(name):
    assert _value(name) is MISSING


def test_counted_hidden_units_of_a_feed_forward_are_its_width():
    assert names_d_ff("mlp_num_hiddens") and names_d_ff("ffn_num_hiddens")
    assert not names_d_ff("num_hiddens")
