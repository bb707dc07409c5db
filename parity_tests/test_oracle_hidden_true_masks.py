"""Attention applying its mask as True = hidden (`scores + mask * -1e9`, `masked_fill(mask, -inf)`),
read from its text: masks are handed over that way (`--mask-convention drop`). Text that compares,
inverts or hands the mask on is not read. Planted bugs stay MISMATCH. The convention so adapted is
the gap `mask_convention`: grading fails it unless the assignment declares that convention."""
from __future__ import annotations

import ast

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.hidden_mask import reads_true_as_hidden  # noqa: E402


@pytest.fixture
def hidden(candidate_file):
    return candidate_file("hidden_true_masks.py")


def test_numpy_attention_adding_mask_times_a_large_negative_matches(hidden):
    res = check("sdpa", f"{hidden}:hidden_mask_attention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "as True = hidden" in render_text(res)


def test_a_planted_scale_beside_that_mask_is_a_mismatch(hidden):
    res = check("sdpa", f"{hidden}:hidden_mask_attention_BUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_torch_attention_filling_where_the_mask_is_set_matches(hidden):
    res = check("mha", f"{hidden}:HiddenMaskAttention", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_missing_scale_in_that_attention_is_a_mismatch(hidden):
    res = check("mha", f"{hidden}:HiddenMaskAttentionBUG", examples=25)
    assert res.verdict == "mismatch", render_text(res)


def test_an_adapted_convention_is_the_gap_mask_convention_and_grading_fails_it(hidden):
    quick = check("mha", f"{hidden}:HiddenMaskAttention", examples=6)
    assert quick.verdict == "match" and "mask_convention" in quick.gaps, render_text(quick)
    assert "True where a key is hidden" in quick.gaps["mask_convention"], quick.gaps
    graded = check("mha", f"{hidden}:HiddenMaskAttention", examples=6, require=("mask_convention",))
    assert graded.verdict == "incomplete" and "convention" in graded.message, render_text(graded)


def test_an_assignment_declaring_true_as_hidden_grades_that_convention_in_full(hidden):
    drop = {"mask_convention": "drop", "declared": ("mask_convention",),
            "require": ("mask_convention",)}
    res = check("mha", f"{hidden}:HiddenMaskAttention", examples=6, **drop)
    assert res.verdict == "match" and "mask_convention" not in res.gaps, render_text(res)
    bug = check("mha", f"{hidden}:HiddenMaskAttentionBUG", examples=25, **drop)
    assert bug.verdict == "mismatch", render_text(bug)


@pytest.mark.parametrize("body, hides", [
    ("if mask is not None:\n s = s.masked_fill(mask, float('-inf'))", True),
    ("s = np.where(mask, -1e9, s)", True),
    ("s += mask * -10000.0", True),
    ("mask = mask.unsqueeze(1)\ns = s.masked_fill(mask, -1e9)", True),
    ("s = s.masked_fill(mask == 0, -1e9)", False),            # compared: True = seen
    ("s = s.masked_fill(~mask, -1e9)", False),                # inverted
    ("s = s + (1 - mask) * -1e9", False),
    ("s = np.where(mask, s, -1e9)", False),                   # True = seen
    ("s = apply_mask(s, mask)", False),                       # handed on, read elsewhere
    ("s = s.masked_fill(mask, 0.0)", False),                  # not a large negative
    ("mask = 1 - mask\ns = s + mask * -1e9", False),          # rebound from an inversion
    ("s = s * mask", False),
])
def test_only_text_applying_the_mask_as_hidden_is_read(body, hides):
    tree = ast.parse("def f(s, mask):\n" + "\n".join(" " + ln for ln in body.splitlines()))
    assert reads_true_as_hidden(tree, "mask") is hides
