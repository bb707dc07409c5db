"""Configs read as dict items (`cfg["context_length"]`): keys are answered by what they mean
(sizes, lengths, dropout 0, bias switches), each said in the notes; a key whose name says nothing
ends as an interface error naming it and the option that sets it."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.configs import ConfigAttributeMissing, ConfigBag, fill  # noqa: E402
from parity_tests.oracle.reading.signatures import HYPER_ALIASES  # noqa: E402

FILE = candidate_path("config_items.py")


def test_item_config_matches_and_says_what_it_answered():
    res = check("mha", f"{FILE}:ItemConfigAttention", examples=5)
    assert res.verdict == "match", render_text(res)
    text = " ".join(res.notes)
    assert "'context_length'" in text and "'qkv_bias'" in text, res.notes


def test_item_config_with_a_bug_is_a_mismatch():
    res = check("mha", f"{FILE}:ItemConfigAttentionUnscaled", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_unknown_item_is_an_interface_error_naming_key_and_option():
    res = check("mha", f"{FILE}:ItemConfigUnknownKey", examples=3)
    assert res.verdict == "interface_error", render_text(res)
    assert "flux_capacitor" in res.message and "--init-kwargs" in res.message, res.message


def test_bag_answers_items_by_meaning():
    bag = fill({"d_model": 8, "num_heads": 2}, HYPER_ALIASES)
    notes: list = []
    bag.__dict__["_oracle_notes"] = notes
    assert bag["emb_dim"] == 8 and bag["n_heads"] == 2
    assert bag["drop_rate"] == 0.0
    assert bag["context_length"] >= 64            # a length covering every drawn sequence
    assert bag["qkv_bias"] is True
    assert bag.get("context_length") is None     # .get keeps its default: only reads are answered
    assert any("'context_length'" in n for n in notes), notes
    with pytest.raises(ConfigAttributeMissing, match="config\\['flux'\\]"):
        bag["flux"]
    with pytest.raises(KeyError):
        ConfigBag()[3]
