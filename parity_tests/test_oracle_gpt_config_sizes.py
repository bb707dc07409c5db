"""Parts built from a GPT config dataclass whose every field is required, the width named
`embd_size` and the layer and head counts fields a single part never reads: the oracle reads the
width, fills the counts, and compares the part; a planted bug in the same style still fails."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.name_words import names_d_model  # noqa: E402
from parity_tests.oracle.reading.recognise.base import MISSING  # noqa: E402
from parity_tests.oracle.reading.recognise.config_fields import meaning_value  # noqa: E402

FILE = candidate_path("gpt_config_sizes.py")


@pytest.mark.parametrize("component, name, verdict, built", [
    ("mha", "ConfigCausalAttention", "match", "n_heads=2"),
    ("mha", "ConfigCausalAttentionModelScale", "mismatch", "n_heads=2"),
    ("ffn", "ConfigFeedForward", "match", "n_heads=1"),
    ("ffn", "ConfigFeedForwardNoActivation", "mismatch", "n_heads=1"),
])
def test_a_config_naming_its_width_embd_size_and_requiring_counts_builds(component, name, verdict,
                                                                          built):
    res = check(component, f"{FILE}:{name}", examples=10)
    assert res.verdict == verdict, render_text(res)
    note = next(n for n in res.notes if "built SmallGPTConfig(" in n)
    assert "embd_size=" in note and "n_layer=1" in note and built in note, note


def test_embd_beside_a_width_word_names_the_model_width():
    assert names_d_model("embd_size") and names_d_model("embd_dim")
    assert not names_d_model("embd_pdrop")


@pytest.mark.parametrize("field, drawn, expected", [
    ("n_layer", {}, 1), ("num_layers", {"num_layers": 3}, 3),
    ("n_encoder_layers", {"num_encoder_layers": 2, "num_layers": 5}, 2),
    ("num_dec_layers", {"num_layers": 4}, 4), ("n_heads", {}, 1), ("n_heads", {"num_heads": 2}, 2),
])
def test_a_count_field_gets_the_drawn_count_else_one(field, drawn, expected):
    assert meaning_value(field, {"d_model": 4, **drawn}) == expected


def test_a_field_naming_neither_stays_out():
    assert meaning_value("layer_scale_init", {"d_model": 4}) is MISSING
