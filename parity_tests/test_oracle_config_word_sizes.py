"""A config attribute naming a size in words the constructor's word reader knows (`heads_num`) is
answered with the drawn size and said in the notes; a planted bug is still caught."""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise.base import MISSING
from parity_tests.oracle.reading.recognise.configs import default_for

CANDS = os.path.join(candidate_path(), "config_word_sizes.py")


def test_a_config_heads_num_matches():
    res = check("mha", f"{CANDS}:HeadsNumAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("'heads_num' read as num_heads" in n for n in res.notes), res.notes


def test_a_softmax_over_the_queries_is_still_caught():
    res = check("mha", f"{CANDS}:HeadsNumAttentionKeySoftmax", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_which_config_words_name_a_drawn_size():
    values = {"d_model": 8, "num_heads": 2, "d_ff": 16, "max_len": 9}
    assert default_for("heads_num", values) == 2
    assert default_for("number_of_heads", values) == 2
    assert default_for("model_dimension", values) == 8
    assert default_for("feedforward_dimension", values) == 16
    assert default_for("max_sentence_length", values) == 9
    assert default_for("heads_dim", values) is MISSING
    assert default_for("heads_num", {"d_model": 8}) is MISSING      # no head count drawn
