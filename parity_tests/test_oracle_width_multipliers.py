"""A feed-forward whose hidden width is a REQUIRED multiple of the model width (`forward_expansion`,
`expansion_factor`, `mlp_ratio`): passed d_ff / d_model (4 when the drawn d_ff is no whole multiple),
then d_ff drawn as that multiple of d_model. Before, the multiplier got d_ff by position (or a
sub-module) and no reference weight fit (an interface error). A planted bug stays MISMATCH."""
from __future__ import annotations

import inspect

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise import MISSING, width_multiplier  # noqa: E402


@pytest.fixture
def widths(candidate_file):
    return candidate_file("width_multiplier_feed_forwards.py")


@pytest.mark.parametrize("component, name", [("ffn", "ExpansionFeedForward"), ("ffn", "RatioMlp"),
                                             ("encoder_layer", "ExpansionEncoderLayer")])
def test_feed_forward_width_given_as_a_multiplier_matches(widths, component, name):
    res = check(component, f"{widths}:{name}", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any("width multiplier; passed 4" in n for n in res.notes), res.notes


def test_a_planted_bug_behind_a_width_multiplier_is_a_mismatch(widths):
    res = check("ffn", f"{widths}:ExpansionFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


class _Ctx:
    def __init__(self):
        self.notes = []

    def note(self, text):
        self.notes.append(text)


def _param(name):
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def test_the_multiplier_is_the_drawn_width_over_the_model_width_when_whole():
    ctx = _Ctx()
    assert width_multiplier.value(ctx, _param("forward_expansion"), {"d_model": 8, "d_ff": 24}) == 3
    assert width_multiplier.value(ctx, _param("mlp_ratio"), {"d_model": 8, "d_ff": 20}) == 4
    assert width_multiplier.value(ctx, _param("d_ff"), {"d_model": 8, "d_ff": 24}) is MISSING
    assert len(ctx.notes) == 2
