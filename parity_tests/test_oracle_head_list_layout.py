"""NumPy attention as a list of single heads, every matrix used as `x @ W`: the heads' (d_model,
d_head) pieces are read as (in, out) by their shape, and the square output matrix by the layout
probe, which used to skip attention kept in per-head pieces (the output matrix then went in as
(out, in) and correct code was MISMATCH). Planted bug (heads joined in reverse): MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "head_list_x_at_w.py"


def test_a_list_of_x_at_w_heads_matches_with_its_output_matrix_read_as_in_out(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:HeadListSelfAttention", examples=12)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "read as --weight-layout in_out" in text, text


def test_a_planted_bug_in_the_head_list_is_a_mismatch(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:HeadListSelfAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
