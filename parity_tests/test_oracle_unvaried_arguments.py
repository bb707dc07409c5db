"""Forward arguments the oracle never varied. It passed `is_causal=False`, `dropout_p=0.0`,
`need_weights=True` ... at one value (reading/signatures.CALL_FLAGS) and left every other
argument it does not know (`scale=`, `key_padding_mask=`, `**kwargs`) at its default, so a
candidate ignoring them matched (`oracle_hostile/ignores_call_arguments.py`) and the report said
only "every quantity matched". An attention function's `is_causal` is now also called True, with
no mask, against a causal reference (sandbox/modes.causal_flag); every other such argument is named
"not checked" in the one-value line; right code taking the same arguments still matches.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, json_report, render_text  # noqa: E402

HERE = os.path.dirname(__file__)
HOSTILE = os.path.join(HERE, "oracle_hostile", "ignores_call_arguments.py")
RIGHT = os.path.join(HERE, "oracle_candidates", "call_arguments.py")
RIGHT_NUMPY = os.path.join(HERE, "oracle_candidates", "call_arguments_numpy.py")


def _line(res) -> str:
    line = next((n for n in res.notes if n.startswith("compared at one value only:")), "")
    assert "not checked" in line, res.notes
    return line


def test_a_function_ignoring_is_causal_fails_and_its_scale_is_named_not_checked():
    res = check("sdpa", HOSTILE + ":attention", runs=1, examples=4)
    assert res.verdict == "mismatch", render_text(res)
    assert "is_causal=True" in res.message, res.message
    line = _line(res)
    for said in ("scale left at its default None", "dropout_p passed 0.0 in every run"):
        assert said in line, line
    assert "is_causal" not in line, line                  # compared, so not listed
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


@pytest.mark.parametrize("spec", [RIGHT + ":attention", RIGHT + ":library_attention",
                                  RIGHT_NUMPY + ":attention"])
def test_right_code_taking_the_same_arguments_still_matches(spec):
    res = check("sdpa", spec, runs=1, examples=4)
    assert res.verdict == "match", render_text(res)
    line = _line(res)
    assert "scale left at its default None" in line and "is_causal" not in line, line


def test_a_function_default_is_named_by_its_name_never_its_address():
    """`activation=F.relu` as torch's layers default: the line names `relu`, the same on every run
    (a repr with a memory address made two reports of one check differ)."""
    import torch.nn.functional as F

    from parity_tests.oracle.reading.unvaried import _short
    assert _short(F.relu) == "relu"
    assert _short(lambda x: x) == "a function"
    assert _short(None) == "None" and _short("gelu") == "'gelu'"
