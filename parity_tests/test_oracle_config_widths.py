"""Layers built from config objects, attention that does its own Add & Norm, and the widths the
oracle draws for layers that hold a LayerNorm: a width name two hyperparameters share goes by
meaning (`hidden_dim` is the feed-forward width beside `dim`), library-specific names
(`encoder_attention_heads`, `encoder_ffn_dim`) are set, a `config=None` default the class needs
gets a config, and no layer is compared at a degenerate LayerNorm width (d_model < 4, where a tiny
eps turns rounding into a false MISMATCH). An attention module whose parameters all map but which
keeps a LayerNorm of its own is named for what it is."""
from __future__ import annotations

import os

import pytest
from hypothesis import find, settings
from hypothesis.errors import NoSuchExample

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.harness.strategies import MIN_D_MODEL  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.components import get  # noqa: E402
from parity_tests.oracle.reading.findings import Findings  # noqa: E402
from parity_tests.oracle.reading.recognise.configs import _claims  # noqa: E402

FILE = candidate_path("config_layers.py")
VALUES = {"d_model": 8, "num_heads": 2, "d_ff": 5, "eps": 1e-5}


def _narrow(name, predicate):
    """An example of component `name` whose d_model satisfies predicate (None when there is none)."""
    try:
        return find(get(name).strategy({}, False, Findings()), lambda e: predicate(e["d_model"]),
                    settings=settings(max_examples=300, database=None))
    except NoSuchExample:
        return None


@pytest.mark.parametrize("name", ["encoder_layer", "decoder_layer", "model"])
def test_layers_holding_a_layernorm_never_draw_a_degenerate_width(name):
    assert _narrow(name, lambda d: d < MIN_D_MODEL) is None


def test_attention_alone_still_reaches_width_one():
    ex = _narrow("mha", lambda d: d == 1)
    assert ex is not None and ex["d_model"] == 1


def test_a_correct_post_norm_layer_with_eps_1e_12_matches():
    res = check("encoder_layer", f"{FILE}:TinyEpsPostNormLayer", examples=25)
    assert res.verdict == "match", render_text(res)
    built = next(n for n in res.notes if "built NarrowEpsConfig" in n)
    assert "dim=4" in built and "hidden_dim=3" in built, built   # probe sizes: d_model 4, d_ff 3


def test_a_planted_bug_in_the_eps_1e_12_layer_is_a_mismatch():
    res = check("encoder_layer", f"{FILE}:TinyEpsPostNormLayerNoResidual", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_library_names_for_heads_and_widths_and_a_none_config_default_are_filled():
    res = check("encoder_layer", f"{FILE}:WideLayer", examples=25)
    assert res.verdict == "match", render_text(res)
    said = " ".join(res.notes)
    assert "encoder_attention_heads=num_heads" in said and "encoder_ffn_dim=d_ff" in said, said
    assert "'config' defaults to None" in said, said


def test_a_planted_bug_in_the_library_named_layer_is_a_mismatch():
    res = check("encoder_layer", f"{FILE}:WideLayerHalfFfn", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


@pytest.mark.parametrize("names, expected", [
    ({"dim", "hidden_dim", "n_heads"}, {"dim": "d_model", "hidden_dim": "d_ff", "n_heads": "num_heads"}),
    ({"hidden_size", "intermediate_size"}, {"hidden_size": "d_model", "intermediate_size": "d_ff"}),
    ({"hidden_dim", "ffn_dim"}, {"hidden_dim": "d_model", "ffn_dim": "d_ff"}),
    ({"d_model", "decoder_attention_heads", "decoder_ffn_dim"},
     {"d_model": "d_model", "decoder_attention_heads": "num_heads", "decoder_ffn_dim": "d_ff"}),
])
def test_a_shared_width_name_goes_to_the_hyperparameter_named_nowhere_else(names, expected):
    claims = _claims(names.__contains__, VALUES)
    assert {k: v for k, v in claims.items() if k in expected} == expected


ADD_NORM = os.path.join(os.path.dirname(FILE), "attention_output_norm.py")


def test_attention_with_its_own_add_and_norm_is_named_as_such():
    res = check("mha", f"{ADD_NORM}:AttentionWithOutputNorm", examples=5)
    assert res.verdict == "interface_error", render_text(res)
    assert res.message.startswith("constructing the candidate: the candidate keeps a LayerNorm inside "
                                  "the block"), res.message
    assert "output.LayerNorm.weight" in res.message and "encoder_layer" in res.message, res.message


NORMS = os.path.join(os.path.dirname(FILE), "tiny_eps_norms.py")


def test_the_layernorm_component_never_draws_a_degenerate_width():
    assert _narrow("layernorm", lambda d: d < MIN_D_MODEL) is None


def test_a_correct_layernorm_with_eps_1e_12_matches():
    res = check("layernorm", f"{NORMS}:TinyEpsLayerNorm", examples=60)
    assert res.verdict == "match", render_text(res)


def test_a_correct_layernorm_on_rows_of_tiny_spread_matches():
    # four features drawn at spread 0.01 around an offset: one row's spread is far smaller, and
    # float64 rounding, amplified by max|x| / std, took torch's correct input gradient 1.11x past
    # the unscaled tolerance; the oracle scales it by that condition number, as the parity suite does
    tiny = {"B": 3, "T": 2, "d_model": 4, "eps": 1e-12, "scale": 0.01, "seed": 2463161604}
    res = check("layernorm", f"{NORMS}:TinyEpsLayerNorm", replay=tiny)
    assert res.verdict == "match", render_text(res)
    bug = check("layernorm", f"{NORMS}:TinyEpsUnbiasedNorm", replay=tiny)
    assert bug.verdict == "mismatch" and bug.quantity == "output", render_text(bug)


def test_a_planted_bug_in_a_layernorm_with_eps_1e_12_is_a_mismatch():
    res = check("layernorm", f"{NORMS}:TinyEpsUnbiasedNorm", examples=25, shrink=False)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)
