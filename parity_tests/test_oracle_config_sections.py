"""Configs handed down in sections: a required argument named for the part it configures
(`layer_args`, `encoder_args`) is a config object; a key naming a part of the model
(`layer_args["self_attention"]`) is a section holding the same hyperparameters; a config holds the
head width under its usual names (`args["d_k"]`). Before, the layer's dict got the head count by
position and the attention's `args["d_k"]` was an interface error. Planted bugs stay MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.configs import ConfigAttributeMissing, ConfigBag, fill, is_config_name  # noqa: E402
from parity_tests.oracle.reading.signatures import HYPER_ALIASES  # noqa: E402

FILE = candidate_path("config_section_layers.py")


def test_an_attention_reading_head_widths_from_its_dict_matches():
    res = check("mha", f"{FILE}:SectionAttention", examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_planted_scale_there_is_a_mismatch():
    res = check("mha", f"{FILE}:SectionAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_layer_handing_a_section_to_its_attention_matches_and_says_so():
    res = check("encoder_layer", f"{FILE}:SectionEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any("'self_attention' read: a section" in n for n in res.notes), res.notes
    assert any("'layer_args': a config object" in n for n in res.notes), res.notes


def test_a_planted_missing_residual_there_is_a_mismatch():
    res = check("encoder_layer", f"{FILE}:SectionEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_config_names_and_sections_by_their_words():
    assert is_config_name("encoder_args") and is_config_name("attn_config") and is_config_name("cfg")
    assert not is_config_name("layer_params") and not is_config_name("args_count")
    bag = fill({"d_model": 8, "num_heads": 2}, HYPER_ALIASES)
    assert bag["d_k"] == 4 and bag["head_dim"] == 4
    section = bag["cross_attention"]
    assert isinstance(section, ConfigBag) and section["n_head"] == 2
    with pytest.raises(ConfigAttributeMissing):
        bag["flux_capacitor"]           # a key naming no part is still named as missing


def test_singular_layer_counts_name_the_stack_sizes():
    assert "n_encoder_layer" in HYPER_ALIASES["num_encoder_layers"]
    assert "n_decoder_layer" in HYPER_ALIASES["num_decoder_layers"]
