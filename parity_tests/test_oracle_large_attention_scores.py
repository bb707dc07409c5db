"""A softmax that does not subtract its row maximum, inside a module: exact on the scores of size 1
the search draws, NaN once a score passes exp's float64 range. Only `sdpa` had a case of large
scores (test_oracle_hostile_values.py); an attention module, an encoder or decoder layer (pre-norm
too: a LayerNorm before the attention) and a whole model holding such a softmax got `match`. Each
now gets a case whose query and key projections are scaled to scores of about 3000
(components/scores.py, core/large_scores.py): the wrong code ends `non_finite`, its right twin
(the same code, the row maximum subtracted) matches on the very same example.
"""
from __future__ import annotations

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.components import get, scores
from parity_tests.oracle.core import large_scores
from parity_tests.oracle.grading.fixtures import draw_examples
from parity_tests.oracle.reading.findings import Findings

RIGHT = candidate_path("stable_softmax_stacks.py")

HOLDERS = [("mha", "MultiHeadAttention"), ("encoder_layer", "EncoderLayer"),
           ("encoder_layer", "PreNormEncoderLayer"), ("decoder_layer", "DecoderLayer"),
           ("model", "Transformer")]


@pytest.mark.parametrize("component,name", HOLDERS)
def test_a_softmax_without_its_row_maximum_is_caught_and_its_right_twin_matches(component, name):
    res = check(component, f"{RIGHT}:{name}BUG", examples=4)
    assert res.verdict == "non_finite", res.message
    assert res.example.get(scores.MARK), res.example        # found by the large-score case
    assert "large_scores" in res.replay                      # and the replay builds it again
    twin = check(component, f"{RIGHT}:{name}", replay=res.example)
    assert twin.verdict == "match", twin.message


@pytest.mark.parametrize("component,name", HOLDERS)
def test_right_code_matches_with_the_large_score_case_in_its_search(component, name):
    res = check(component, f"{RIGHT}:{name}", examples=4)
    assert res.verdict == "match", res.message
    assert large_scores.note() in res.notes


@pytest.mark.parametrize("component,fixed", [("mha", {}), ("encoder_layer", {}),
                                             ("encoder_layer", {"norm_first": True}),
                                             ("decoder_layer", {"norm_first": True}), ("model", {}),
                                             ("model", {"norm_first": True})])
def test_every_attention_reaches_scores_past_the_overflow(component, fixed):
    comp, caps = get(component), Findings(fixed=fixed)
    for i, base in enumerate(draw_examples(component, 3, 5, False, caps)):
        ex = large_scores.example(comp, base, fixed, caps, i, "float64")
        case = scores.tuned(comp, comp.build(ex, "float64", caps))
        tops = scores.maxima(comp, case)
        assert tops and all(1000 < top < 10000 for top in tops.values()), tops
        assert comp.conditioning(case, "output", None) == max(tops.values())
        assert comp.conditioning(comp.build(base, "float64", caps), "output", None) == 1.0


def test_the_large_score_case_is_float64_only_and_keeps_fixed_sizes():
    comp, caps = get("encoder_layer"), Findings(fixed={})
    (base,) = draw_examples("encoder_layer", 1, 0, False, caps)
    assert large_scores.example(comp, base, {}, caps, 0, "float32") is None
    assert large_scores.example(get("ffn"), base, {}, caps, 0, "float64") is None
    ex = large_scores.example(comp, base, {"max_len": 3, "max_batch": 1}, caps, 0, "float64")
    assert (ex["B"], ex["T"], ex[scores.MARK]) == (1, 3, True)
