"""Code computing in float32 whatever it is given fails a float64 check on its output's dtype, and
the report says to check it with --dtype float32, where right code matches and a planted bug
still fails."""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

CANDS = os.path.join(candidate_path(), "float32_only_norms.py")


def test_float32_only_code_is_told_to_use_a_float32_check():
    res = check("layernorm", f"{CANDS}:Float32LayerNorm", examples=4)
    assert res.verdict == "wrong_dtype", render_text(res)
    assert "computes in float32 whatever it is given" in res.message, res.message
    f32 = check("layernorm", f"{CANDS}:Float32LayerNorm", examples=8, dtype="float32")
    assert f32.verdict == "match", render_text(f32)


def test_a_planted_bug_in_float32_only_code_is_caught_in_float32():
    res = check("layernorm", f"{CANDS}:Float32LayerNormEpsOutside", examples=12, dtype="float32", shrink=False)
    assert res.verdict == "mismatch", render_text(res)
