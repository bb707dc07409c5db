"""A positional table right only for its first rows: computed in chunks of 24 rows, every chunk
starting again at position 0. The search draws lengths up to 16 and the stretched case reached 19
(whole models 11 / 13), so it got `match`. The stretched case now compares a positional table at
the whole length it was built for (max_len: 64, or the user's) and a whole model at its built
length (target 63, source 64; core/beyond_draws.py); the right twin (each chunk from its own first
position) matches there.
"""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.components import get  # noqa: E402
from parity_tests.oracle.core.beyond_draws import stretched  # noqa: E402
from parity_tests.oracle.reading.findings import Findings  # noqa: E402

RIGHT = candidate_path("chunked_position_tables.py")


@pytest.mark.parametrize("component,name", [("positional", "PositionalEncoding"),
                                            ("model", "Transformer")])
def test_a_table_wrong_past_its_first_rows_is_a_mismatch_and_its_right_twin_matches(component, name):
    res = check(component, f"{RIGHT}:{name}BUG", examples=4)
    assert res.verdict == "mismatch", render_text(res)
    assert max(res.example.get(k, 0) for k in ("T", "S")) > 24, res.example
    twin = check(component, f"{RIGHT}:{name}", replay=res.example)
    assert twin.verdict == "match", render_text(twin)


def test_right_code_matches_at_the_built_length():
    res = check("positional", f"{RIGHT}:PositionalEncoding", examples=4)
    assert res.verdict == "match", render_text(res)
    assert any("past the search's sizes" in n and "T=64" in n for n in res.notes), res.notes


def test_the_built_length_follows_max_len_and_keeps_the_user_bounds():
    base = {"B": 2, "T": 5, "d_model": 4, "max_len": 64, "seed": 1}
    assert stretched(get("positional"), base, {}, Findings(), 0)["T"] == 64
    assert stretched(get("positional"), dict(base, max_len=100), {"max_len": 100}, Findings(), 0)["T"] == 100
    assert stretched(get("positional"), base, {"max_seq": 30}, Findings(), 0)["T"] == 30
    model = {"B": 2, "S": 3, "T": 4, "src_len": [3, 2], "tgt_len": [4, 1], "seed": 1}
    ex = stretched(get("model"), model, {}, Findings(), 0)
    assert (ex["T"], ex["S"], ex["tgt_len"][0], ex["src_len"][0]) == (63, 64, 63, 64)
    assert (stretched(get("model"), model, {"max_len": 20}, Findings(), 0)["S"],
            stretched(get("model"), model, {"max_len": 4096}, Findings(), 0)["S"]) == (20, 64)
