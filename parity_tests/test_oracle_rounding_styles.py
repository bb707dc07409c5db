"""Right code that rounds otherwise than the reference matches on every secret and in every mode:
its tolerance is the table's times how much the example's inputs amplify rounding
(`Component.conditioning`: large attention scores, LayerNorm rows of tiny spread), in the main run,
the other modes and the runs under inference mode alike. The same code with a bug still fails."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("rounding_styles.py")
# structural.LARGE_SCORES with a seed on which a log-sum-exp softmax's gradient of q, 3.8e-7 after
# cancelling terms of size ~30, differed by 1.3e-12: 2.6x the unscaled float64 tolerance
LARGE = {"B": 2, "H": 2, "Tq": 3, "Tk": 4, "dk": 1, "dv": 2, "scale": 30.0,
         "mask": {"kind": "none", "keep": None}, "seed": 3562906746}
# 4 features at spread 0.01 around an offset: the one-pass variance's rounding, 3.3x the unscaled
# tolerance in the no_grad mode (salt 0) and in train() mode (salt 1), on those modes' own inputs
TINY = {"B": 1, "T": 1, "d_model": 4, "eps": 1e-5, "scale": 0.01, "seed": 357202797}


def test_a_log_sum_exp_softmax_matches_on_large_scores():
    res = check("sdpa", f"{FILE}:attention_log_sum_exp", replay=LARGE)
    assert res.verdict == "match", render_text(res)


@pytest.mark.parametrize("salt", [0, 1])
def test_a_one_pass_variance_matches_in_every_mode_on_rows_of_tiny_spread(salt):
    res = check("layernorm", f"{FILE}:OnePassVarianceNorm", replay=TINY, salt=salt)
    assert res.verdict == "match", render_text(res)


def test_the_same_styles_with_a_bug_still_fail():
    res = check("sdpa", f"{FILE}:attention_log_sum_exp_wrong_scale", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    res = check("layernorm", f"{FILE}:OnePassVarianceNormWrongEps", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_the_two_styles_match_over_secrets():
    for salt in (3, 4):
        for comp, name in (("sdpa", "attention_log_sum_exp"), ("layernorm", "OnePassVarianceNorm")):
            res = check(comp, f"{FILE}:{name}", salt=salt, examples=40)
            assert res.verdict == "match", render_text(res)
