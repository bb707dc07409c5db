"""A whole model holding a final norm after its encoder and after its decoder (`encoder.norm`,
`decoder.norm`) is checked against a reference built with final_norm=true, found by itself and
said so and named as the gap norm_order (grading fails it unless the assignment sets final_norm;
before: INTERFACE_ERROR, the two norms having no counterpart); its twin that builds the
encoder's final norm but never applies it stays a mismatch; one stack's norm alone is no finding."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.final_norms import holds_final_norms  # noqa: E402


@pytest.fixture
def models(candidate_file):
    return candidate_file("final_norm_models.py")


def test_norms_at_both_stacks_ends_are_final_norms():
    assert holds_final_norms({"encoder.norm.weight": (8,), "decoder.norm.a_2": (8,)}, 8)
    assert holds_final_norms({"enc_norm.gamma": (8,), "decoder.layer_norm.weight": (8,)}, 8)


@pytest.mark.parametrize("names", [{"encoder.norm.weight": (8,)},
                                   {"encoder.norm.weight": (8,), "decoder.norm.weight": (4,)},
                                   {"encoder.layers.0.norm.weight": (8,), "decoder.norm.weight": (8,)}])
def test_one_stack_or_another_name_or_width_is_no_finding(names):
    assert not holds_final_norms(names, 8)


def test_a_model_with_final_norms_matches_a_reference_built_with_them(models):
    res = check("model", f"{models}:FinalNormTransformer", examples=4)
    assert res.verdict == "match", render_text(res)
    assert any("final_norm=true" in n for n in res.notes), res.notes
    assert "final norm" in res.gaps.get("norm_order", ""), res.gaps


def test_grading_fails_final_norms_the_assignment_does_not_set(models):
    graded = check("model", f"{models}:FinalNormTransformer", examples=2, require=("norm_order",))
    assert graded.verdict == "incomplete", render_text(graded)
    allowed = check("model", f"{models}:FinalNormTransformer", examples=2, require=("norm_order",),
                    settings={"final_norm": True})
    assert allowed.verdict == "match" and "norm_order" not in allowed.gaps, render_text(allowed)


def test_a_final_norm_built_but_never_applied_is_a_mismatch(models):
    res = check("model", f"{models}:FinalNormTransformerBUG", examples=6, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_final_norm_false_still_requires_none(models):
    res = check("model", f"{models}:FinalNormTransformer", examples=2, settings={"final_norm": False})
    assert res.verdict == "interface_error", render_text(res)


def test_a_model_behind_a_builder_function_is_probed_for_final_norms_too(models):
    """`make_model(...)` (the Annotated Transformer's builder) returning a model with final norms:
    the probe builds it once, as it builds a class, and the reference gets final_norm=true; the
    twin whose encoder never applies its norm still fails."""
    res = check("model", f"{models}:make_model", examples=4)
    assert res.verdict == "match", render_text(res)
    assert any("final_norm=true" in n for n in res.notes), res.notes
    bug = check("model", f"{models}:make_model_BUG", examples=6, shrink=False)
    assert bug.verdict == "mismatch", render_text(bug)
