"""GELU feed-forwards in the ways people write them (torch's exact and tanh F.gelu, GPT-2's tanh
formula typed out with x**3, NumPy erf through np.vectorize(math.erf), a NumPy tanh-GELU with a
hand-written backward) match under --set activation=gelu / gelu_tanh on two secrets each; planted
bugs (sqrt(2/pi) left out, erf(h) for erf(h / sqrt 2)) stay mismatches."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("gelu_variants.py")
EXACT, TANH = {"activation": "gelu"}, {"activation": "gelu_tanh"}


@pytest.mark.parametrize("name,settings", [("ExactGeluFFN", EXACT), ("TanhGeluFFN", TANH),
                                           ("CubedTanhGeluFFN", TANH), ("ErfGeluNumpyFFN", EXACT),
                                           ("TanhGeluNumpyFFN", TANH)])
@pytest.mark.parametrize("salt", [11, 12])
def test_a_gelu_written_another_way_matches(name, settings, salt):
    res = check("ffn", f"{FILE}:{name}", examples=12, salt=salt, settings=dict(settings))
    assert res.verdict == "match", render_text(res)


@pytest.mark.parametrize("name,settings", [("CubedTanhGeluFFNBUG", TANH), ("ErfGeluNumpyFFNBUG", EXACT)])
def test_a_planted_gelu_bug_is_a_mismatch(name, settings):
    res = check("ffn", f"{FILE}:{name}", examples=25, settings=dict(settings), shrink=False)
    assert res.verdict == "mismatch", render_text(res)
