"""A function's weight arguments named `<layer>_<leaf>` (`proj_w`, `fc_b`) are read as the layer's
leaf (`proj.w`), and `fc` / `proj` name a feed-forward's expanding and projecting layers: before,
`feed_forward(x, fc_w, fc_b, proj_w, proj_b)` was an interface error ("cannot tell what to pass for
proj_w, proj_b"). Class attributes keep their names as they are. Planted bugs: MISMATCH."""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.resolution import Space

CANDS = os.path.join(candidate_path(), "flat_argument_names.py")


def test_flat_argument_names_are_placed():
    res = check("ffn", f"{CANDS}:feed_forward", examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_there_is_a_mismatch():
    res = check("ffn", f"{CANDS}:feed_forward_BUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_only_arguments_are_read_flat():
    args = Space(["proj_w"], {"proj_w": None}, {"proj_w": True})
    attrs = Space(["proj_w"], {"proj_w": (4, 4)}, {"proj_w": True})
    assert args.find("proj.w") == "proj_w" and args.has_prefix("proj.")
    assert attrs.find("proj.w") is None and not attrs.has_prefix("proj.")
