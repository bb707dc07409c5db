"""A forward's training switch read by its words under a name outside the usual spellings
(`use_dropout=True`, `apply_dropout=True`, recognise/training_switch) is passed True by the train
mode too, as `training` and `is_training` are. Before, it was False in every run ("its True value
is not compared"), so code wrong only on the path every training call takes (a dropout at a rate of
its own, a training path without the activation) matched; now a MISMATCH there. Right code under
such a switch, its dropout at the rate it is given, still matches."""
from __future__ import annotations

import os
import textwrap

import pytest

from parity_tests.oracle import check, render_text

HOSTILE = os.path.join(os.path.dirname(__file__), "oracle_hostile", "unlisted_switch_own_rate.py")

RIGHT = textwrap.dedent('''
    import numpy as np


    class FeedForwardUseDropout:
        def __init__(self, d_model, d_ff, dropout=0.1):
            self.W1, self.b1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
            self.W2, self.b2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)
            self.dropout = dropout

        def forward(self, x, use_dropout=True):
            h = np.maximum(0.0, x @ self.W1 + self.b1)
            if use_dropout and self.dropout > 0:
                keep = np.random.binomial(1, 1.0 - self.dropout, h.shape)
                h = h * keep / (1.0 - self.dropout)
            return h @ self.W2 + self.b2
''')


@pytest.mark.parametrize("name,arg", [("FeedForwardUseDropoutOwnRate", "use_dropout"),
                                      ("FeedForwardApplyDropoutNoActivation", "apply_dropout")])
def test_a_training_path_wrong_under_an_unlisted_switch_fails_in_the_train_mode(name, arg):
    res = check("ffn", f"{HOSTILE}:{name}", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert "differs in train() mode" in text, text
    assert f"forward argument {arg!r} defaults to on: passed False" in text, text


def test_right_code_under_an_unlisted_switch_still_matches(tmp_path):
    path = tmp_path / "use_dropout_ffn.py"
    path.write_text(RIGHT)
    res = check("ffn", f"{path}:FeedForwardUseDropout", examples=12)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "'use_dropout' defaults to on: passed False" in text and "the train mode passes it True" in text, text
    assert "True value is not compared" not in text, text
