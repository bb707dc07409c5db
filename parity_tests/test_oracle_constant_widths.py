"""Modules taking no size at all, their model width and feed-forward hidden width both constants of
the file: the model width is the one fixed axis the built module takes inputs of, the hidden width
the other; every example is drawn at both (said in the notes). A planted bug stays MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("constant_widths.py")


def test_a_feed_forward_sized_only_by_constants_matches():
    res = check("ffn", f"{FILE}:ConstantWidthFeedForward", examples=5)
    assert res.verdict == "match", render_text(res)
    assert any("fixed by the candidate's code at 12" in n for n in res.notes), res.notes
    assert any("feed-forward width is fixed by the candidate's code at 48" in n
               for n in res.notes), res.notes


def test_a_planted_bug_in_a_feed_forward_sized_by_constants_is_a_mismatch():
    res = check("ffn", f"{FILE}:ConstantWidthFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
