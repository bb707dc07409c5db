"""The head count of an attention whose width and head count are both globals of its project
(`model_width = 16`, `n_heads = 4` star-imported from a settings module, no constructor argument):
read from the module's globals once its width is found fixed, and every example drawn with it.
Before, the head count was drawn (1, 2, ...) against the code's 4 and correct code was a
MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


def _spec(candidate_file, name):
    return f"{candidate_file('settings_module_heads', 'attention.py')}:{name}"


def test_an_attention_with_its_heads_in_a_settings_module_matches(candidate_file):
    res = check("mha", _spec(candidate_file, "SettingsHeadsAttention"), examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("head count is fixed by a global" in n and "4" in n for n in res.notes), res.notes


def test_its_planted_scale_bug_is_a_mismatch(candidate_file):
    res = check("mha", _spec(candidate_file, "SettingsHeadsAttentionBUG"), examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
