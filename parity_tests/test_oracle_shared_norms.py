"""A block holding one LayerNorm where the component has one per sublayer stops with the interface
error as before, which now names the likely cause (one norm shared by the sublayers); a block with
its two norms matches and its report says nothing of the kind."""
from __future__ import annotations

import os
from types import SimpleNamespace

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.recognise.shared_norm import message, norm_of

CANDS = os.path.join(candidate_path(), "shared_norms.py")


def test_a_block_with_a_norm_per_sublayer_matches():
    res = check("encoder_layer", f"{CANDS}:TwoNormBlock", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "holds one layer norm" not in render_text(res)


def test_one_norm_shared_by_both_sublayers_is_named_as_the_likely_cause():
    res = check("encoder_layer", f"{CANDS}:SharedNormBlock", examples=10)
    text = render_text(res)
    assert res.verdict == "interface_error", text
    assert "holds one layer norm (ln.weight, ln.bias)" in text and "(norm1, norm2)" in text, text


def test_which_names_count_as_norms():
    assert norm_of("norm1.weight") == "norm1" and norm_of("ln_g") == "ln"
    assert norm_of("blocks.0.ln_1.g") == "blocks.0.ln_1" and norm_of("gamma") == ""
    assert norm_of("attn.c_attn_b") is None and norm_of("feed_forward.linear1.bias") is None
    refs = {"norm1.weight": (4,), "norm1.bias": (4,), "norm2.weight": (4,), "norm2.bias": (4,)}
    one = SimpleNamespace(names=["ln_g", "ln_b"], shapes={"ln_g": (4,), "ln_b": (4,)})
    two = SimpleNamespace(names=["ln1_g", "ln2_g"], shapes={"ln1_g": (4,), "ln2_g": (4,)})
    assert "one layer norm (ln_g, ln_b)" in message("encoder_layer", one, ["norm2.weight"], refs)
    assert message("encoder_layer", two, ["norm2.weight"], refs) is None
    assert message("encoder_layer", one, [], refs) is None
    assert message("norm", one, ["norm2.weight"], refs) is None
