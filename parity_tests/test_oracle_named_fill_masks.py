"""A True = hidden mask filled with a value bound to a name first (`neg = torch.finfo(...).min;
scores.masked_fill(mask, neg)`) is read as the bare value is, so masks are handed over True =
hidden (the gap `mask_convention`); a name holding a small value, or rebound to one, is not read
so, and those attentions stay MISMATCH."""
from __future__ import annotations

import ast
import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.hidden_mask import reads_true_as_hidden  # noqa: E402

CANDS = os.path.join(candidate_path(), "named_fill_masks.py")


def test_a_fill_bound_to_a_name_reads_as_true_hidden():
    res = check("sdpa", f"{CANDS}:NamedFillAttention", examples=12)
    assert res.verdict == "match", render_text(res)
    assert "mask_convention" in res.gaps, res.gaps


@pytest.mark.parametrize("name", ["NamedSmallFillAttention", "NamedFillRebound"])
def test_a_name_holding_a_small_fill_is_not_read_and_fails(name):
    res = check("sdpa", f"{CANDS}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_parameter_or_loop_name_is_never_taken_as_the_fill():
    for text in ("def f(s, mask, neg=-1e9):\n    return s.masked_fill(mask, neg)\n",
                 "def f(s, mask):\n    for neg in (-1e9, 1.0):\n        s = s.masked_fill(mask, neg)\n    return s\n",
                 "def f(s, mask):\n    neg = -1e9\n    neg += 2e9\n    return s.masked_fill(mask, neg)\n"):
        assert not reads_true_as_hidden(ast.parse(text), "mask"), text
    assert reads_true_as_hidden(ast.parse("def f(s, mask):\n    neg = float('-inf')\n"
                                          "    return s.masked_fill(mask, neg)\n"), "mask")
