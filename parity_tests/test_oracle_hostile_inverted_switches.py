"""A forward's training switch of the opposite sense (`deterministic=True`, `no_dropout=False`) or
off by default (`stochastic=False`, `is_training=False`) is read by its words (recognise/training_switch): every run
passes it its inference value, the train mode the other one. Before, such names were left at their
defaults in every run, so code wrong only on the other side matched; now a MISMATCH there. Right
code under those switches, NumPy and torch, still matches."""
from __future__ import annotations

import os
import textwrap

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise.mode_strings import string_switches
from parity_tests.oracle.reading.recognise.training_switch import inference_value, is_switch_name, switch_sense

HOSTILE = os.path.join(os.path.dirname(__file__), "oracle_hostile", "inverted_training_switch.py")
STRINGS = os.path.join(os.path.dirname(__file__), "oracle_hostile", "string_mode_switch.py")

RIGHT = textwrap.dedent('''
    import numpy as np
    import torch
    from torch import nn


    class FeedForwardModeTrain:
        def __init__(self, d_model, d_ff, dropout=0.1):
            self.W1, self.b1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
            self.W2, self.b2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)
            self.p = dropout

        def forward(self, x, mode="train"):
            h = np.maximum(0.0, x @ self.W1 + self.b1)
            if mode == "train" and self.p > 0:
                h = h * np.random.binomial(1, 1.0 - self.p, h.shape) / (1.0 - self.p)
            return h @ self.W2 + self.b2


    class FeedForwardNoDropout:
        def __init__(self, d_model, d_ff, dropout=0.1):
            self.W1, self.b1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
            self.W2, self.b2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)
            self.dropout = dropout

        def forward(self, x, no_dropout=False):
            h = np.maximum(0.0, x @ self.W1 + self.b1)
            if not no_dropout and self.dropout > 0:
                h = h * np.random.binomial(1, 1.0 - self.dropout, h.shape) / (1.0 - self.dropout)
            return h @ self.W2 + self.b2


    class FeedForwardDeterministic(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.1):
            super().__init__()
            self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
            self.p = dropout

        def forward(self, x, deterministic: bool = True):
            h = torch.relu(self.linear1(x))
            return self.linear2(nn.functional.dropout(h, self.p, training=not deterministic))
''')


@pytest.mark.parametrize("name,passed", [("FeedForwardDeterministic", "passed True"),
                                         ("FeedForwardStochastic", "passed False"),
                                         ("FeedForwardTrainingByDefault", "passed True"),
                                         ("FeedForwardIsTrainingOff", "passed False")])
def test_a_path_behind_an_inverted_switch_is_compared(name, passed):
    res = check("ffn", f"{HOSTILE}:{name}", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert f"training switch ({'off' if passed == 'passed True' else 'on'} when training): {passed}" \
        in text, text


@pytest.mark.parametrize("name,mode", [("FeedForwardModeTrain", "dropout rates at 0.5 or another"),
                                       ("FeedForwardPhaseTest", "differs in train() mode")])
def test_a_path_behind_a_string_switch_is_compared(name, mode):
    res = check("ffn", f"{STRINGS}:{name}", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert "is a training switch held as a string" in text and mode in text, text


@pytest.mark.parametrize("name,train", [("FeedForwardNoDropout", "False"),
                                        ("FeedForwardDeterministic", "False"),
                                        ("FeedForwardModeTrain", "'train'")])
def test_right_code_under_an_inverted_switch_still_matches(tmp_path, name, train):
    path = tmp_path / "inverted_switch_ffn.py"
    path.write_text(RIGHT)
    res = check("ffn", f"{path}:{name}", examples=8)
    text = render_text(res)
    assert res.verdict == "match", text
    assert f"the train mode passes it {train}" in text, text


def test_string_switches_are_read_by_name_and_default():
    def forward(x, mode="train", phase="test", interp="bilinear", split="val", name="eval"):
        return x if mode == "training" else x
    assert string_switches(forward, is_switch_name) == {
        "mode": ("eval", "train"), "phase": ("test", "training"), "split": ("val", "training")}


@pytest.mark.parametrize("name,default,value", [
    ("deterministic", True, True), ("deterministic", False, True), ("stochastic", False, False),
    ("no_dropout", False, True), ("disable_dropout", True, True), ("not_no_dropout", True, False),
    ("use_dropout", True, False), ("use_dropout", False, False), ("is_inference", False, True),
    ("dropout", 0, None), ("dropout", 0.1, None), ("deterministic_train", True, None),
    ("test_size", True, None), ("eval", None, None)])
def test_inference_values_are_read_by_words_and_default(name, default, value):
    assert inference_value(name, default) is value
    assert (switch_sense(name) is None) is (name in ("deterministic_train", "test_size"))
