"""Attention choosing its mask convention by dtype (`if mask.dtype == torch.bool:
masked_fill(mask, -inf) else: masked_fill(mask <= 0, -inf)`): read along the branch a boolean mask
takes, so the oracle's boolean masks are handed over True = hidden and the gap `mask_convention` is
named. Before, the comparison in the other branch stopped the reading and the keep masks hid
exactly the keys to see (NON_FINITE). Planted bug: MISMATCH."""
from __future__ import annotations

import ast

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.hidden_mask import _bool_test  # noqa: E402

FILE = "dtype_chosen_masks.py"


def test_a_mask_convention_chosen_by_dtype_is_read_for_boolean_masks(candidate_file):
    res = check("sdpa", f"{candidate_file(FILE)}:attend_by_mask_dtype", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "NOT COMPARED (mask_convention)" in text, text


def test_a_planted_bug_beside_the_dtype_chosen_mask_is_a_mismatch(candidate_file):
    res = check("sdpa", f"{candidate_file(FILE)}:attend_by_mask_dtypeBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


@pytest.mark.parametrize("text,want", [("mask.dtype == torch.bool", True),
                                       ("torch.bool == mask.dtype", True),
                                       ("mask.dtype is np.bool_", True),
                                       ("mask.dtype != torch.bool", False),
                                       ("mask.dtype == torch.float32", None),
                                       ("other.dtype == torch.bool", None)])
def test_only_a_question_about_the_masks_own_dtype_picks_a_branch(text, want):
    assert _bool_test(ast.parse(text, mode="eval").body, "mask") is want
