"""Forward arguments the oracle never varies. It passes `is_causal=False`, `dropout_p=0.0`,
`need_weights=True` ... at one value (reading/signatures.CALL_FLAGS) and leaves every other
argument it does not know (`scale=`, `key_padding_mask=`, `**kwargs`) at its default, so a
candidate ignoring them matches (`oracle_hostile/ignores_call_arguments.py`). The report used to say
only "every quantity matched"; its one-value line now names each such argument, as "not checked",
and right code taking the same arguments still matches.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, json_report, render_text  # noqa: E402

HERE = os.path.dirname(__file__)
HOSTILE = os.path.join(HERE, "oracle_hostile", "ignores_call_arguments.py")
RIGHT = os.path.join(HERE, "oracle_candidates", "call_arguments.py")


def _line(res) -> str:
    line = next((n for n in res.notes if n.startswith("compared at one value only:")), "")
    assert "not checked" in line, res.notes
    return line


def test_a_function_ignoring_is_causal_and_scale_is_told_they_were_never_checked():
    res = check("sdpa", HOSTILE + ":attention", runs=1, examples=3)
    assert res.verdict == "match", render_text(res)      # right at the values passed
    line = _line(res)
    for said in ("is_causal passed False in every run", "scale left at its default None",
                 "dropout_p passed 0.0 in every run"):
        assert said in line, line
    assert line in render_text(res)
    assert line in json_report(res)["notes"]


def test_a_module_ignoring_padding_and_keywords_is_told_they_were_never_checked():
    res = check("mha", HOSTILE + ":Attention", runs=1, examples=3)
    assert res.verdict == "match", render_text(res)
    line = _line(res)
    for said in ("key_padding_mask left at its default None", "need_weights passed True in every run",
                 "**kwargs no other keyword ever passed"):
        assert said in line, line
    assert "mask left" not in line.replace("key_padding_mask left", "")   # the mask it was given


def test_right_code_taking_the_same_arguments_still_matches():
    res = check("sdpa", RIGHT + ":attention", runs=1, examples=3)
    assert res.verdict == "match", render_text(res)
    assert "is_causal passed False in every run" in _line(res)
