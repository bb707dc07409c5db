"""--init-kwargs reach the constructor they were given for. In `GainedMLP(d_model, mlp_neurons,
mlp_gain)` the block word in `mlp_neurons` made the oracle build a feed-forward block for it, and
the block it found was the class itself, built again without the keyword until the nesting ran
out: "parameter 'mlp_gain' is required, but the oracle has nothing left to pass" although
--init-kwargs gave it. A class is never built as an argument of itself now, and a keyword the
constructor does not take is refused by name. Planted bug: MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "block_word_arguments/mlp.py"
GAIN = {"mlp_gain": 1.0}


def test_a_given_keyword_reaches_the_constructor(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:GainedMLP", examples=10, init_kwargs=GAIN)
    assert res.verdict == "match", render_text(res)


def test_the_planted_bug_behind_a_given_keyword_is_a_mismatch(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:GainedMLPBUG", examples=25, init_kwargs=GAIN, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_without_the_keyword_the_argument_is_named(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:GainedMLP", examples=2)
    assert res.verdict == "interface_error", render_text(res)
    assert "'mlp_gain' is required" in res.message and "GainedMLP(...)" in res.message, res.message


def test_a_keyword_the_constructor_lacks_is_refused_by_name(candidate_file):
    res = check("ffn", f"{candidate_file(FILE)}:GainedMLP", examples=2,
                init_kwargs={**GAIN, "mlp_gian": 1.0})
    assert res.verdict == "interface_error", render_text(res)
    assert "--init-kwargs" in res.message and "'mlp_gian'" in res.message, res.message
    assert "d_model, mlp_neurons, mlp_gain" in res.message, res.message
