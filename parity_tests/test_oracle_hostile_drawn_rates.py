"""The rate_ctor and eval_rate runs pass a dropout rate drawn for each example from its inputs (the
check's secret): 0.5 on about half, one between 0.05 and 0.95 on the others (ctor_modes.drawn_rate), and
rate_ctor also builds with the rates a config object holds at that rate (recognise/config_rates)
and a builder function's (`make_ffn(..., dropout=0.1)`) too,
through --init-kwargs, which this project's TransformerConfig, a dataclass config, the module's own
config class and the oracle's config object now take. Before, every such run passed 0.5 and a
config's rates stayed 0, so an eval() scale right only at 0 and 0.5, or read from a config,
matched; now a MISMATCH. Right code of each style still matches."""
from __future__ import annotations

import os
import textwrap

import pytest

from parity_tests.oracle import check, render_text

HOSTILE = os.path.join(os.path.dirname(__file__), "oracle_hostile")

RIGHT = textwrap.dedent('''
    from dataclasses import dataclass

    import numpy as np
    import torch
    from torch import nn


    @dataclass
    class MLPConfig:
        n_embd: int = 768
        d_ff: int = 3072
        resid_pdrop: float = 0.1


    class FeedForwardAnnotatedConfig(nn.Module):
        def __init__(self, config: MLPConfig):
            super().__init__()
            self.fc = nn.Linear(config.n_embd, config.d_ff)
            self.proj = nn.Linear(config.d_ff, config.n_embd)
            self.drop = nn.Dropout(config.resid_pdrop)

        def forward(self, x):
            return self.drop(self.proj(torch.relu(self.fc(x))))


    class FeedForwardModuleConfig(FeedForwardAnnotatedConfig):
        def __init__(self, config):
            super().__init__(config)


    class NumpyFeedForward:
        def __init__(self, d_model, d_ff):
            self.W1, self.b1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
            self.W2, self.b2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)

        def forward(self, x, dropout_p=0.1, training=True):
            h = np.maximum(0.0, x @ self.W1 + self.b1)
            if training and dropout_p > 0:
                h = h * np.random.binomial(1, 1.0 - dropout_p, h.shape) / (1.0 - dropout_p)
            return h @ self.W2 + self.b2


    def make_ffn(d_model, d_ff, dropout=0.1):
        return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropout),
                             nn.Linear(d_ff, d_model))
''')


@pytest.mark.parametrize("where,name,mode", [
    ("rate_keyed_eval_scale.py", "FeedForwardKeyedScale", "dropout rates at 0.5 or another rate drawn"),
    ("rate_keyed_eval_scale.py", "NumpyFeedForwardKeyedScale", "a dropout rate of 0.5 or another drawn"),
    ("config_rate_eval_scale.py", "FeedForwardProjectConfig", "those its config object holds too"),
    ("config_rate_eval_scale.py", "FeedForwardAnnotatedConfig", "those its config object holds too"),
    ("config_rate_eval_scale.py", "FeedForwardModuleConfig", "those its config object holds too"),
    ("config_bag_rate_eval_scale.py", "FeedForwardConfigItems", "those its config object holds too"),
    ("builder_rate_eval_scale.py", "make_ffn", "dropout rates at 0.5 or another rate drawn")])
def test_an_eval_scale_off_the_rates_once_passed_is_found(where, name, mode):
    res = check("ffn", f"{os.path.join(HOSTILE, where)}:{name}", examples=40)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert mode in text and "[output]" in text, text


@pytest.mark.parametrize("name", ["FeedForwardAnnotatedConfig", "FeedForwardModuleConfig",
                                  "NumpyFeedForward", "make_ffn"])
def test_right_code_at_drawn_rates_still_matches(tmp_path, name):
    path = tmp_path / "rated_ffn.py"
    path.write_text(RIGHT)
    res = check("ffn", f"{path}:{name}", examples=25)
    assert res.verdict == "match", render_text(res)
