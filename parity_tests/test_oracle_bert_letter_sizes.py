"""Sizes named as BERT's paper names them, `H` (width) and `A` (heads): the constructor's own
`H // A` (or the attention's it hands them to) says `H` is the width, although a lone `h` is the
head count elsewhere. Planted bugs stay MISMATCH; an ambiguous text changes nothing."""
from __future__ import annotations

import importlib.util

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.division_roles import head_count_correction  # noqa: E402


@pytest.fixture
def letters(candidate_file):
    return candidate_file("bert_letter_sizes.py")


def test_attention_sized_by_h_and_a_matches(letters):
    res = check("mha", f"{letters}:LetterAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "'H' is the width" in render_text(res)


def test_a_planted_softmax_axis_in_that_attention_is_a_mismatch(letters):
    res = check("mha", f"{letters}:LetterAttentionBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_layer_handing_h_and_a_to_its_attention_matches(letters):
    res = check("encoder_layer", f"{letters}:LetterEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)


def test_a_planted_bug_in_that_layer_is_a_mismatch(letters):
    res = check("encoder_layer", f"{letters}:LetterEncoderLayerBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_only_one_unambiguous_division_corrects_a_name(tmp_path):
    def _init(src, n=[0]):
        n[0] += 1
        path = tmp_path / f"letters_{n[0]}.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)          # our own test text
        return module.M.__init__

    aliases = ["num_heads", "h"]
    assert head_count_correction(_init("class M:\n def __init__(self, H, A):\n  self.k = H // A\n"),
                                 aliases) == ("H", "A")
    # the Annotated Transformer's h divides nothing of its own: no correction
    assert head_count_correction(_init("class M:\n def __init__(self, h, d_model):\n"
                                       "  self.k = d_model // h\n"), aliases) is None
    # two different divisions: ambiguous
    assert head_count_correction(_init("class M:\n def __init__(self, H, A, B):\n"
                                       "  self.k = H // A\n  self.j = H // B\n"), aliases) is None
