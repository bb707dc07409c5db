"""Attention applying its mask as 1 = hidden through a comparison that selects the set entries
(`masked_fill(mask == 1, float("-1e9"))`, `np.where(mask != 0, -1e9, s)`), read from its text:
masks are handed over that way (`--mask-convention drop`). `mask == 0` and other comparisons are
not read. Planted bugs stay MISMATCH."""
from __future__ import annotations

import ast

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.compared_hidden_mask import (  # noqa: E402
    reads_compared_as_hidden,
)


@pytest.fixture
def compared(candidate_file):
    return candidate_file("compared_hidden_masks.py")


def test_torch_attention_filling_where_mask_equals_one_matches(compared):
    res = check("mha", f"{compared}:ComparedMaskAttention", examples=12)
    assert res.verdict == "match", render_text(res)
    assert "mask_convention" in res.gaps and "as True = hidden" in render_text(res)


def test_a_planted_missing_scale_beside_that_mask_is_a_mismatch(compared):
    res = check("mha", f"{compared}:ComparedMaskAttentionBUG", examples=25)
    assert res.verdict == "mismatch", render_text(res)


@pytest.mark.parametrize("body, hides", [
    ("s = s.masked_fill(mask == 1, float('-1e9'))", True),
    ("s = s.masked_fill(mask == True, -1e9)", True),
    ("s = np.where(mask != 0, -1e9, s)", True),
    ("s = s.masked_fill(mask.unsqueeze(1) > 0, float('-inf'))", True),
    ("s = s.masked_fill(mask, float('-1e9'))", True),            # a large negative as a string
    ("s = s.masked_fill(mask == 0, -1e9)", False),               # True = seen
    ("s = s.masked_fill(mask < 1, -1e9)", False),
    ("s = np.where(mask == 1, s, -1e9)", False),                 # the set entries are kept
    ("s = s.masked_fill(mask == 1, 0.0)", False),                # not a large negative
    ("s = s.masked_fill(mask == 1, -1e9)\ns = s.masked_fill(mask == 0, -1e9)", False),
    ("s = s.masked_fill(mask, -1e9)", False),                    # nothing rewritten: hidden_mask's
])
def test_only_set_selecting_comparisons_are_read_as_hidden(body, hides):
    tree = ast.parse("def f(s, mask):\n" + "\n".join(" " + ln for ln in body.splitlines()))
    assert reads_compared_as_hidden(tree, "mask") is hides
