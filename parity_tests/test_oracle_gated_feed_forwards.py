"""A gated feed-forward (SwiGLU, a GELU-gated unit named like the paper's, GEGLU with both
up-projections packed in one (2F, D) Linear) is not the paper's feed-forward: an interface error
whose message names the cause ("gated feed-forward"), never a verdict that blames one weight. Before,
the message was the generic "no counterpart" / "cannot tell where" one. The paper's two-Linear
feed-forward beside them still matches."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise import gated_ffn  # noqa: E402


@pytest.fixture
def gated(candidate_file):
    return candidate_file("gated_feed_forwards.py")


@pytest.mark.parametrize("name", ["SwiGLUFeedForward", "GatedFeedForward", "PackedGEGLUFeedForward"])
def test_a_gated_feed_forward_is_an_interface_error_naming_the_gate(gated, name):
    res = check("ffn", f"{gated}:{name}", examples=10)
    assert res.verdict == "interface_error", render_text(res)
    assert "gated feed-forward" in render_text(res), render_text(res)


def test_the_papers_feed_forward_beside_them_still_matches(gated):
    res = check("ffn", f"{gated}:PlainFeedForward", examples=10)
    assert res.verdict == "match", render_text(res)


def test_gates_are_told_from_shapes_at_unequal_widths():
    swiglu = {"w1.weight": (6, 4), "w2.weight": (4, 6), "w3.weight": (6, 4)}
    assert "w3.weight" in gated_ffn.unclaimed("encoder_layer", ["w3.weight"], swiglu)
    plain_extra = {"w1.weight": (6, 4), "w2.weight": (4, 6), "proj.weight": (5, 4)}
    assert gated_ffn.unclaimed("ffn", ["proj.weight"], plain_extra) is None
    assert gated_ffn.unclaimed("mha", ["w3.weight"], swiglu) is None
    ref = {"linear1.weight": (6, 4), "linear2.weight": (4, 6)}
    packed = SimpleNamespace(shapes={"up.weight": (12, 4), "down.weight": (4, 6)})
    assert "up.weight" in gated_ffn.missing("ffn", packed, ["linear1.weight"], ref)
    plain = SimpleNamespace(shapes={"up.weight": (6, 4), "down.weight": (4, 6)})
    assert gated_ffn.missing("ffn", plain, ["linear1.weight"], ref) is None
