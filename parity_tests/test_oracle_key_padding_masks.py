"""A mask argument that is a key padding, (batch, keys), under a general name (`mask`,
`keys_attention_mask`), expanded by the layer itself (recognise/key_padding_arg): it was RAISED
on the oracle's (batch, 1, Tq, Tk) mask. Now it is handed (batch, Tk), in the convention the
candidate reads (True = token, or True = padding), only padding masks are drawn and the others are
named as not compared; the planted twins do not match."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("key_padding_masks.py")


@pytest.mark.parametrize("comp,name,flipped", [
    ("mha", "KeyPaddingAttention", False),
    ("mha", "PaddingTrueAttention", True),
    ("encoder_layer", "KeyPaddingEncoderLayer", False),
])
def test_a_key_padding_mask_argument_is_handed_over_as_one(comp, name, flipped):
    res = check(comp, f"{FILE}:{name}", examples=15)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "is a key padding, (batch, Tk)" in text, text
    assert ("True where a key is padding" in text) is flipped, text
    assert "NOT COMPARED (masks)" in text and "causal" in text, text   # the kinds it cannot take


@pytest.mark.parametrize("name,verdicts", [("KeyPaddingAttentionBUG", ("mismatch",)),
                                           ("KeyPaddingAfterSoftmaxBUG", ("mismatch", "raised"))])
def test_planted_bugs_behind_a_key_padding_argument_do_not_match(name, verdicts):
    res = check("mha", f"{FILE}:{name}", examples=25)
    assert res.verdict in verdicts, render_text(res)
