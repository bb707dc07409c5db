"""Merged-head attention taking one (Tq, Tk) mask for the whole batch (`mask[None]` over its
(batch*heads, Tq, Tk) scores) is handed that mask, not one spread over the merged batch*heads axis
(which its forward broadcasts and its backward cannot take); a planted bug is still caught."""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "shared_mask_merged_heads.py")


def test_merged_head_attention_with_one_mask_for_the_batch_matches():
    res = check("mha", f"{CANDS}:SharedMaskMergedAttention", examples=16)
    assert res.verdict == "match", render_text(res)
    assert "(Tq, Tk), one for the whole batch" in render_text(res)


def test_a_bug_in_merged_head_attention_is_caught():
    res = check("mha", f"{CANDS}:SharedMaskMergedAttentionKeyUnscaled", examples=16, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert res.quantity.startswith("grad_"), res.quantity
