"""A causal flag that defaults to True (`Attention(d_model, num_heads, causal=True)`): the reference's
attention is not causal, so the oracle builds the flag False for the main runs and True for the
causal run, compares both and says so; a planted bug in the causal branch is still a mismatch."""
from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.components import Case  # noqa: E402
from parity_tests.oracle.core.modes import causal_case  # noqa: E402

FILE = candidate_path("causal_default_flags.py")


def test_a_causal_flag_defaulting_to_true_is_built_false_and_matches():
    res = check("mha", f"{FILE}:CausalByDefaultAttention", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("'causal': a causal flag that defaults to True" in n for n in res.notes), res.notes


def test_a_planted_bug_in_the_causal_branch_is_a_mismatch():
    res = check("mha", f"{FILE}:CausalByDefaultAttentionBUG", examples=15)
    assert res.verdict == "mismatch", render_text(res)
    assert "causal flag" in res.message, res.message


def test_a_layer_built_causal_that_drops_the_padding_it_is_given_is_a_mismatch():
    hostile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                           "causal_flag_drops_padding.py:CausalSelfAttention")
    res = check("mha", hostile, examples=10)
    assert res.verdict == "mismatch", render_text(res)
    assert res.detail["mode"] == "causal_ctor", res.detail


def test_the_causal_runs_example_joins_the_examples_mask_where_every_query_keeps_a_key():
    x = np.zeros((2, 3, 4))
    pad = np.ones((2, 1, 3, 3), dtype=bool)
    pad[1, ..., 2] = False                      # the second sequence's last key is padding
    case = Case("mha", {}, {}, {"x": x}, {"mask": pad}, {}, np.zeros((2, 3, 4)), (2, 3, 4))
    joined = causal_case(case, keep_masks=True).masks["mask"]
    tril = np.tril(np.ones((3, 3), dtype=bool))
    assert np.array_equal(joined[0, 0], tril) and np.array_equal(joined[1, 0], tril & pad[1, 0])
    assert np.array_equal(causal_case(case).masks["mask"][1, 0], tril)
    pad[1, ..., 0] = False                      # now the first query would keep no key
    assert np.array_equal(causal_case(case, keep_masks=True).masks["mask"][1, 0], tril)
