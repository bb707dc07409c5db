"""A mask argument with fewer axes than (batch, 1, Tq, Tk) under a general name (`mask`,
`keys_attention_mask`): a key padding, (batch, keys), or one (queries, keys) mask for the whole
batch (recognise/mask_forms). Such right code was RAISED on the oracle's mask; now it is handed its
form, in the convention it reads (True = seen, or True = hidden), only masks that form can say are
drawn and the others are named as not compared; the planted twins do not match (one whose masking
leaks in the probe is not given the form, and raises on the oracle's mask: no match either). A mask
under a name no list holds (`pad_attn_mask=None`, `keys_mask=None`) is taken by the one optional
argument named with the word `mask` (signatures.ANY_MASK, recognise/mask_word): its masks were
never drawn."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("mask_forms.py")


@pytest.mark.parametrize("comp,name,form,flipped,not_compared", [
    ("mha", "KeyPaddingAttention", "(batch, Tk)", False, "causal"),
    ("mha", "PaddingTrueAttention", "(batch, Tk)", True, "causal"),
    ("encoder_layer", "KeyPaddingEncoderLayer", "(batch, Tk)", False, "causal"),
    ("mha", "SharedMaskAttention", "(Tq, Tk), one for the whole batch", False, "padding"),
])
def test_a_mask_argument_of_fewer_axes_is_handed_over_in_its_form(comp, name, form, flipped,
                                                                   not_compared):
    res = check(comp, f"{FILE}:{name}", examples=15)
    text = render_text(res)
    assert res.verdict == "match", text
    assert f"is taken as {form}" in text, text
    assert ("True where a key is hidden" in text) is flipped, text
    gap = next(line for line in text.splitlines() if "NOT COMPARED (masks)" in line)
    assert not_compared in gap, text                       # the kinds it cannot take, named


@pytest.mark.parametrize("name,verdicts", [("KeyPaddingAttentionBUG", ("mismatch",)),
                                           ("KeyPaddingAfterSoftmaxBUG", ("mismatch", "raised")),
                                           ("SharedMaskAttentionBUG", ("mismatch", "raised"))])
def test_planted_bugs_behind_a_key_padding_argument_do_not_match(name, verdicts):
    res = check("mha", f"{FILE}:{name}", examples=25)
    assert res.verdict in verdicts, render_text(res)


@pytest.mark.parametrize("name,form", [("WordNamedMaskAttention", None),
                                       ("WordNamedKeyPadding", "(batch, Tk)")])
def test_a_mask_under_a_name_no_list_holds_is_drawn(name, form):
    res = check("mha", f"{FILE}:{name}", examples=15)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "named with the word 'mask'): takes the mask" in text, text
    if form is None:
        assert "NOT COMPARED (masks)" not in text, text          # every mask kind compared
    else:
        assert f"is taken as {form}" in text, text


def test_a_planted_bug_behind_a_word_named_mask_is_a_mismatch():
    res = check("mha", f"{FILE}:WordNamedMaskAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_decoder_taking_key_paddings_in_seq2seq_words_matches():
    """forward(input_sequence, input_attention_mask, output_sequence, output_attention_mask): the
    input sequence is the memory; both masks (batch, keys); the layer masks the future itself, so
    only causal self masks (without padding: the oracle keeps a diagonal causal AND padding cannot
    say) and padding memory masks are drawn."""
    res = check("decoder_layer", f"{FILE}:SequenceNamedDecoderLayer", examples=15)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "are taken as (batch, Tk)" in text and "it masks the future itself" in text, text
    bug = check("decoder_layer", f"{FILE}:SequenceNamedDecoderLayerBUG", examples=25, shrink=False)
    assert bug.verdict in ("mismatch", "raised"), render_text(bug)
