"""Code right only at the batches and lengths the random search draws (batch 1..4, lengths 1..16):
after a search that found nothing, every component also runs its last example stretched to batch 6
and lengths 19 / 23 (core/beyond_draws.py), so a score buffer of 16 keys, a positional table that
repeats after 16 rows and a bug in the last chunk of a batch are mismatches (they got `match` and
full marks before). Right code matches there too, and bounds the user fixed are kept."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.components import get  # noqa: E402
from parity_tests.oracle.core.beyond_draws import stretched  # noqa: E402
from parity_tests.oracle.reading.findings import Findings  # noqa: E402

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile", "sized_for_the_draws.py")


@pytest.mark.parametrize("component, name", [("encoder_layer", "BufferedEncoderLayer"),
                                             ("positional", "RepeatingTable"),
                                             ("sdpa", "chunked_attention")])
def test_code_sized_for_the_draws_is_a_mismatch_past_them(component, name):
    res = check(component, f"{HOSTILE}:{name}", examples=15)
    assert res.verdict == "mismatch", render_text(res)
    assert res.example["B"] == 6 or max(res.example.get(k, 0) for k in ("T", "Tq", "Tk")) > 16, res.example


@pytest.mark.parametrize("component, target", [("encoder_layer", "torch_layers.py:EncoderLayer"),
                                               ("positional", "torch_layers.py:PositionalEncoding"),
                                               ("model", "separate_pad_ids.py:Seq2Seq")])
def test_right_code_matches_past_the_draws(component, target):
    res = check(component, candidate_path(target), examples=6)
    assert res.verdict == "match", render_text(res)
    assert any("past the search's sizes" in n and "B=6" in n for n in res.notes), res.notes


def test_the_stretched_case_keeps_the_user_bounds_and_one_sequence_code_at_batch_one():
    base = {"B": 2, "T": 5, "S": 3, "d_model": 4, "num_heads": 2, "seed": 1,
            "self_mask": {"kind": "causal", "keep": [[[[1]]]]}, "memory_mask": {"kind": "none", "keep": None}}
    ex = stretched(get("decoder_layer"), base, {}, Findings(), 0)
    assert (ex["B"], ex["T"], ex["S"]) == (6, 19, 23)
    assert len(ex["self_mask"]["keep"]) == 6 and len(ex["self_mask"]["keep"][0][0]) == 19
    assert ex["memory_mask"] == {"kind": "none", "keep": None}
    bounded = stretched(get("decoder_layer"), base, {"max_len": 10, "max_batch": 3}, Findings(), 0)
    assert (bounded["B"], bounded["T"], bounded["S"]) == (3, 10, 10)
    one = stretched(get("decoder_layer"), base, {}, Findings(one_sequence=True), 0)
    assert one["B"] == 1
    assert stretched(get("decoder_layer"), dict(base, B=1, T=2, S=2), {"max_len": 2, "max_batch": 1},
                     Findings(), 0) is None
