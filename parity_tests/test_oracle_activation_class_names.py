"""Code building its activation with `getattr(nn, name)()` is handed the name as torch.nn spells
the class ('ReLU', 'GELU'), read from its text and said in the notes; a planted bug is still
caught."""
from __future__ import annotations

import os

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise.activation_class_names import GETATTR_NN

CANDS = os.path.join(candidate_path(), "activation_class_names.py")


def test_a_config_activation_read_by_class_name_matches():
    res = check("ffn", f"{CANDS}:ConfigNamedActivationFFN", examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("'ReLU' (not 'relu')" in n for n in res.notes), res.notes


def test_an_argument_activation_read_by_class_name_matches_with_gelu():
    res = check("ffn", f"{CANDS}:ArgumentNamedActivationFFN", examples=10,
                settings={"activation": "gelu"})
    assert res.verdict == "match", render_text(res)
    assert any("'GELU' (not 'gelu')" in n for n in res.notes), res.notes


def test_an_activated_output_is_still_caught():
    res = check("ffn", f"{CANDS}:ConfigNamedActivationFFNActivatedOutput", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_which_texts_read_as_a_class_name():
    assert GETATTR_NN.search("self.act = getattr(nn, config.activation)()")
    assert GETATTR_NN.search("getattr(torch.nn, act_name)()")
    assert not GETATTR_NN.search("getattr(nn, 'Linear')(d, d)")
    assert not GETATTR_NN.search("getattr(F, config.activation)")
