"""Functions-style code (picoGPT's way of writing GPT-2): plain NumPy functions on one (T, d)
sequence, weights handed as dicts of arrays spread into helpers, matrices kept (in, out). Each right
candidate reaches "match" from the plain command, each planted bug "mismatch"; the oracle says how it
read the code (dicts, one sequence, layout, masks) in the notes."""
from __future__ import annotations

import os

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise import dict_args
from parity_tests.oracle.reading.signatures import nest

HERE = candidate_path()
FUNCS = os.path.join(HERE, "function_styles.py")
N = 6

PAIRS = [
    # id, component, right, wrong (a planted bug), options, notes the right one's report carries
    ("dict_spread_ffn", "ffn", "feed_forward", "feed_forward_lying_bias", {},
     ("dicts of arrays", "computes x @ W")),
    ("dict_subscript_ffn", "ffn", "subscript_feed_forward", "feed_forward_lying_bias", {},
     ("params = {params.fc1.w",)),
    ("one_sequence_sdpa", "sdpa", "attend", "attend_wrong_axis", {},
     ("one sequence at a time", "adds its mask to the scores")),
    ("one_sequence_causal_mha", "mha", "causal_mha", "causal_mha_unscaled", {},
     ("masks the future itself", "c_attn = {c_attn.w, c_attn.b}")),
    ("nested_dict_block", "encoder_layer", "block", "block_no_ffn_residual", {},
     ("attn = {attn.c_attn.w",)),
]


@pytest.mark.parametrize("component,right,wrong,opts,notes", [p[1:] for p in PAIRS],
                         ids=[p[0] for p in PAIRS])
def test_function_style_right_matches_planted_bug_mismatches(component, right, wrong, opts, notes):
    res = check(component, f"{FUNCS}:{right}", examples=N, **opts)
    assert res.verdict == "match", render_text(res)
    for note in notes:
        assert any(note in n for n in res.notes), (note, res.notes)
    bad = check(component, f"{FUNCS}:{wrong}", examples=30, **opts)
    assert bad.verdict == "mismatch", render_text(bad)


def test_one_sequence_code_is_only_drawn_batch_one_and_one_head():
    res = check("sdpa", f"{FUNCS}:attend", examples=N)
    assert res.verdict == "match", render_text(res)
    assert any("batch 1, one head" in n for n in res.notes), res.notes


def test_a_mask_taken_and_ignored_is_caught():
    """The signature claims a mask; the oracle draws masks for it and the output gives it away."""
    res = check("sdpa", f"{FUNCS}:attend_ignores_mask", examples=40)
    assert res.verdict == "mismatch", render_text(res)
    assert not any("masks handed over additive" in n for n in res.notes), res.notes


def test_unscaled_scores_in_function_style_are_named_as_the_likely_cause():
    res = check("mha", f"{FUNCS}:causal_mha_unscaled", examples=30)
    assert res.verdict == "mismatch"
    assert any("likely cause" in n and "not scaled" in n for n in res.notes), res.notes


def test_dict_keys_are_read_from_spreads_handed_on_arguments_and_subscripts():
    import importlib.util
    spec = importlib.util.spec_from_file_location("fn_styles", FUNCS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # spread into a helper: the helper's required parameters not otherwise given
    assert dict_args.tree_of(mod.feed_forward, "c_fc") == {"w": None, "b": None}
    # handed on whole to a helper that spreads it
    assert dict_args.tree_of(mod.causal_mha, "c_attn") == {"w": None, "b": None}
    # nested: a dict whose keys are themselves spread further
    assert dict_args.tree_of(mod.block, "attn") == {"c_attn": {"w": None, "b": None},
                                                    "c_proj": {"w": None, "b": None}}
    # subscript chains, in source order
    assert list(dict_args.leaves(["params"], {"params": dict_args.tree_of(
        mod.subscript_feed_forward, "params")})) == ["params.fc1.w", "params.fc1.b",
                                                     "params.fc2.w", "params.fc2.b"]
    # an array argument, a hyperparameter: not dicts
    assert dict_args.tree_of(mod.attend, "q") is None
    assert dict_args.tree_of(mod.causal_mha, "n_head") is None


def test_nest_hands_leaf_paths_over_as_nested_dicts():
    a, b, c = np.zeros(1), np.ones(1), np.full(1, 2.0)
    out = nest({"attn.c_attn.w": a, "attn.c_attn.b": b, "n_head": c},
               {"attn": {"c_attn": {"w": None, "b": None}}})
    assert out["attn"]["c_attn"]["w"] is a and out["attn"]["c_attn"]["b"] is b
    assert out["n_head"] is c


def test_explicit_out_in_layout_on_in_out_code_is_not_silently_kept_when_it_fails():
    """The default layout is probed; with (in, out) arrays named explicitly the code matches."""
    res = check("ffn", f"{FUNCS}:feed_forward", examples=N, weight_layout="in_out")
    assert res.verdict == "match", render_text(res)
    assert not any("computes x @ W" in n for n in res.notes)
