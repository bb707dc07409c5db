"""Self-attention that stops at the merged heads (no output projection, as BERT-family
`...SelfAttention` classes): the oracle finds that the module holds no matrix besides q, k, v,
checks it against the reference's attention before out_proj (held at the identity), and says so as
a "parameters" gap, so a graded check requiring parameters never gives it full marks. Planted bugs
stay MISMATCH; a projection built and not applied is placed, not called absent."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.core.completeness import REQUIREMENTS  # noqa: E402


@pytest.fixture
def no_out(candidate_file):
    return candidate_file("attention_without_output.py")


def test_attention_without_output_projection_matches_before_out_proj(no_out):
    res = check("mha", f"{no_out}:MergedHeadsSelfAttention", examples=25)
    assert res.verdict == "match", render_text(res)
    assert "output projection" in res.gaps["parameters"], res.gaps


def test_a_graded_check_requiring_parameters_does_not_pass_it(no_out):
    res = check("mha", f"{no_out}:MergedHeadsSelfAttention", examples=6, require=REQUIREMENTS)
    assert res.verdict == "incomplete" and res.exit_code == 1, render_text(res)


@pytest.mark.parametrize("name", ["MergedHeadsSelfAttentionNoTranspose",
                                  "MergedHeadsSelfAttentionWithSpareMatrix"])
def test_a_planted_bug_is_a_mismatch(no_out, name):
    res = check("mha", f"{no_out}:{name}", examples=30, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
