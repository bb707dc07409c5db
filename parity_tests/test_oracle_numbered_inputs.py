"""Attention taking its inputs by number, `forward(x1, x2, mask=None)`: x1 is the query, x2 the key
and value (checked as MultiHead(x1, x2, x2), the report says so). Before, it was an interface
error ("'x2' is required, but the oracle has nothing left to pass"). Planted bug: MISMATCH."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.naming import signature_of  # noqa: E402
from parity_tests.oracle.reading.recognise.shared_kv import numbered_pair  # noqa: E402

FILE = "numbered_inputs.py"


def test_numbered_inputs_are_query_then_key_and_value(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:NumberedInputsAttention", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "'x1' read as the query and 'x2' as key and value" in text, text


def test_a_planted_bug_with_numbered_inputs_is_a_mismatch(candidate_file):
    res = check("mha", f"{candidate_file(FILE)}:NumberedInputsAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_only_one_name_numbered_one_then_two_is_read_so():
    def fwd(x1, x2, x2_mask=None):
        pass

    def other(a1, b2):
        pass

    def named(query, x2):
        pass

    def optional(x1, x2=None):
        pass
    assert numbered_pair(signature_of(fwd)) == ("x1", "x2")
    assert numbered_pair(signature_of(other)) is None
    assert numbered_pair(signature_of(named)) is None
    assert numbered_pair(signature_of(optional)) is None
