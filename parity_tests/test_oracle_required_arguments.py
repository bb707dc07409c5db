"""Arguments the oracle fills or refuses: a required mask gets an all-attend mask in the candidate's
convention (said in the notes), and a --map entry that maps nothing is an error, never ignored."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.map_entries import unused_block_maps  # noqa: E402
from parity_tests.oracle.reading.resolution import Entry  # noqa: E402

HERE = candidate_path()
MASKED = os.path.join(HERE, "required_args.py")
PLAIN = os.path.join(HERE, "config_items.py") + ":OutWidthAttention"


def test_required_mask_gets_an_all_attend_mask():
    res = check("mha", f"{MASKED}:RequiredMaskAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("'mask' is required" in n and "all-attend" in n for n in res.notes), res.notes


def test_required_mask_ignored_is_not_a_match():
    res = check("mha", f"{MASKED}:RequiredMaskAttentionIgnored", examples=25, shrink=False)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)


@pytest.mark.parametrize("name_map,says", [({"q_proj": "nowhere"}, "q_proj=nowhere: maps nothing"),
                                           ({"q_proj.weight": "nowhere"}, "no parameter 'nowhere'"),
                                           ({"qq_proj": "q"}, "unknown reference name")])
def test_map_entry_that_maps_nothing_is_an_error(name_map, says):
    res = check("mha", PLAIN, examples=3, name_map=name_map)
    assert res.verdict == "interface_error", render_text(res)
    assert says in res.message, res.message


def test_block_map_that_acts_is_accepted():
    res = check("mha", PLAIN, examples=3, name_map={"q_proj": "q"})
    assert res.verdict == "match", render_text(res)


def test_unused_block_maps():
    refs = {"self_attn.q_proj.weight": (2, 2)}
    placed = {"self_attn.q_proj.weight": Entry("self_attn.q_proj.weight", "att.wq.weight")}
    assert unused_block_maps({"self_attn": "att"}, refs, placed) == []
    assert unused_block_maps({"self_attn": "attn"}, refs, placed) == ["self_attn=attn"]
    assert unused_block_maps({"self_attn": "-"}, refs, placed) == []
    assert unused_block_maps({"self_attn.q_proj.weight": "x"}, refs, placed) == []

