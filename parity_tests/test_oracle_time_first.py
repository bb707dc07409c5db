"""Layers taking time-first (T, B, d) sequences (fairseq style; torch.nn.MultiheadAttention's
default layout): the oracle finds the layout by a probe (positions of one sequence change another's
output when fed batch-first, never when fed time-first), feeds and reads that layout, and the report
says so. Planted bugs stay MISMATCH; batch-first code is not taken for time-first."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402


@pytest.fixture
def time_first(candidate_file):
    return candidate_file("time_first_layers.py")


@pytest.mark.parametrize("comp,name", [("mha", "TimeFirstAttention"),
                                       ("encoder_layer", "TimeFirstEncoderLayer"),
                                       ("encoder_layer", "TimeFirstPaddedEncoderLayer"),
                                       ("decoder_layer", "TimeFirstDecoderLayer"),
                                       ("positional", "TimeFirstPositionalEncoding")])
def test_a_time_first_layer_is_fed_and_read_time_first(time_first, comp, name):
    res = check(comp, f"{time_first}:{name}", examples=12)
    assert res.verdict == "match", render_text(res)
    assert any("time-first" in n for n in res.notes), res.notes


def test_a_time_first_pre_norm_layer_is_found_although_its_norm_hides_a_constant_shift(time_first):
    """The probe changes one position of one sequence; by a constant, a pre-norm layer's first
    LayerNorm would hide it and the layer would be read batch-first (a false mismatch)."""
    res = check("encoder_layer", f"{time_first}:TimeFirstPreNormEncoderLayer", examples=12,
                settings={"norm_first": True})
    assert res.verdict == "match", render_text(res)
    assert any("time-first" in n for n in res.notes), res.notes


@pytest.mark.parametrize("comp,name", [("mha", "TimeFirstAttentionBUG"),
                                       ("encoder_layer", "TimeFirstEncoderLayerBUG"),
                                       ("positional", "TimeFirstPositionalEncodingBUG")])
def test_a_planted_bug_in_a_time_first_layer_is_a_mismatch(time_first, comp, name):
    res = check(comp, f"{time_first}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_batch_first_code_is_not_taken_for_time_first(candidate_file):
    res = check("encoder_layer", f"{candidate_file('interleaved_qkv.py')}:HeadGroupedEncoderLayer",
                examples=5)
    assert res.verdict == "match", render_text(res)
    assert not any("time-first" in n for n in res.notes), res.notes


@pytest.mark.parametrize("spec", ["position_tables.py:Float32PositionTable",
                                  "computed_numpy_tables.py:ComputedTableEncoding"])
def test_a_batch_first_positional_table_is_not_taken_for_time_first(candidate_file, spec):
    file, name = spec.split(":")
    res = check("positional", f"{candidate_file(file)}:{name}", examples=5)
    assert res.verdict == "match", render_text(res)
    assert not any("time-first" in n for n in res.notes), res.notes


def test_a_key_padding_flag_true_where_padded_is_found_by_behaviour(time_first):
    res = check("encoder_layer", f"{time_first}:TimeFirstPaddingFlagEncoderLayer", examples=25)
    assert res.verdict == "match", render_text(res)
    assert any("True where a key is padding" in n for n in res.notes), res.notes


def test_a_planted_bug_behind_a_padding_flag_is_a_mismatch(time_first):
    res = check("encoder_layer", f"{time_first}:TimeFirstPaddingFlagEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
