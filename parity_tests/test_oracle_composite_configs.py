"""A module that defines a composite config (text and vision configs inside it, as CLIPConfig and
BlipConfig) beside the ones a layer reads: the oracle builds the config that answers the
hyperparameters, whether the constructor's annotation names the candidates
(`PairVisionConfig | PairTextConfig`) or not; the composite one, which answers none, is never
handed to the layer; of two that answer them, the one that has every attribute the layer reads
(`attention_dropout`). A planted scaling bug is still a MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("composite_configs.py")


@pytest.mark.parametrize("name", ["PairAttention", "PairPlainAttention", "PairDropoutAttention"])
def test_the_config_answering_the_widths_is_built(name):
    res = check("mha", f"{FILE}:{name}", examples=20)
    text = render_text(res)
    assert res.verdict == "match", text
    built = next(n for n in res.notes if "built the module's own config class" in n)
    assert "PairConfig()" not in built and "hidden_size=d_model" in built, built


def test_a_planted_scaling_bug_is_a_mismatch():
    res = check("mha", f"{FILE}:PairWideScaledAttention", examples=30, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_of_two_configs_answering_the_widths_the_one_with_what_the_layer_reads_is_built():
    res = check("mha", f"{FILE}:PairDropoutAttention", examples=5)
    built = next(n for n in res.notes if "built the module's own config class" in n)
    assert "PairVisionConfig()" in built, built
