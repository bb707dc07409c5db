"""Attention whose `mask` argument is a causal switch used only as a truth value
(`forward(inputs, mask=True)`, `if mask:`): passed False and handed no mask, so it is compared with
the unmasked reference (before, the drawn mask tensor was handed to `if mask:` and the call
raised). Planted bugs, one hiding the future with the switch off, are still caught."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "causal_switch_attention.py")

pytest.importorskip("torch")


def test_a_mask_switch_is_passed_false_and_matches():
    res = check("mha", f"{CANDS}:SwitchedAttention", examples=6)
    assert res.verdict == "match", render_text(res)
    assert any("forward argument 'mask' is used only as a truth value" in n and "passed False" in n
               for n in res.notes), res.notes


@pytest.mark.parametrize("name", ["SwitchedAttentionUnscaled", "SwitchedAttentionAlwaysCausal"])
def test_planted_bugs_behind_a_mask_switch_are_a_mismatch(name):
    res = check("mha", f"{CANDS}:{name}", examples=8, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
