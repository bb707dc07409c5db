"""GPT2Tokenizer equals transformers' GPT2TokenizerFast on files trained offline with `tokenizers`.

The vocabulary is trained by the `tokenizers` library (ByteLevelBPETokenizer, GPT-2's byte-level BPE)
on a generated corpus and written as vocab.json + merges.txt, the files a GPT-2 folder holds; both
tokenizers read that folder. Ids and decoded text must agree on every Hypothesis text, and decoding
must give the text back. Planted bugs (a merge applied out of rank order, a wrong byte-table entry)
must be caught by the same comparison.
"""
from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import event, given

from npformer.data.tokenizers import GPT2Tokenizer, gpt2_bpe, gpt2_pieces

from .corpora import mixed_corpus
from .text_strategies import text_settings, texts
from .unicode_versions import unassigned_here

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

# texts every planted bug must trip on (the check is the same one the Hypothesis test runs)
FIXED_TEXTS = ["the quick brown fox jumps over the lazy dog", "Hello world! It's 12345 o'clock.",
               "héllo wörld 日本語 😀 don't", " tired hunter's forest  \n\n  rainy days!!"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("gpt2_tokenizer")
    trainer = tokenizers.ByteLevelBPETokenizer()
    trainer.train_from_iterator([mixed_corpus()], vocab_size=800, min_frequency=2,
                                special_tokens=["<|endoftext|>"], show_progress=False)
    trainer.save_model(str(path))
    return path


@pytest.fixture(scope="module")
def hf(folder):
    return transformers.GPT2TokenizerFast.from_pretrained(str(folder))


@pytest.fixture(scope="module")
def ours(folder):
    return GPT2Tokenizer.from_folder(str(folder))


def check_same_as_hf(ours, hf, text: str) -> None:
    ids = ours.encode(text)
    assert ours.decode(ids) == text, f"decode(encode(text)) != text for {text!r}"
    if any(unassigned_here(c) for c in text):
        # the regex engine behind `tokenizers` knows a newer Unicode: see unicode_versions.py and
        # test_only_characters_unassigned_here_split_differently
        event("text holds a code point unassigned in Python's Unicode: round trip only")
        return
    expected = hf(text, add_special_tokens=False)["input_ids"]
    assert ids == expected, f"ids differ on {text!r}"
    assert ours.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True)
    assert hf.decode(ids) == text, f"transformers' own round trip differs on {text!r}"


def test_vocabulary_is_nontrivial(ours, hf):
    # the comparison means something only if merges make multi-byte tokens
    assert len(ours.merges) > 300 and ours.vocab_size == len(hf)
    assert len(ours.encode(FIXED_TEXTS[0])) < len(FIXED_TEXTS[0]) / 2


@pytest.mark.parametrize("text", FIXED_TEXTS + ["", " ", "\n\n", "'s", "a\u2009b", "x\x1c y", "a\x1c!",
                                               "x\x85.", ".\u3000.",
                                               "a <|endoftext|> b<|endoftext|><|endoftext|"])
def test_fixed_texts_match_transformers(ours, hf, text):
    check_same_as_hf(ours, hf, text)


@text_settings()
@given(texts)
def test_ids_and_round_trip_match_transformers(ours, hf, text):
    check_same_as_hf(ours, hf, text)


@text_settings()
@given(texts)
def test_pieces_match_the_byte_level_pre_tokenizer(text):
    # GPT-2's pattern, written here without the `regex` module, against the Rust regex engine's
    pre = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    table = gpt2_bpe.bytes_to_unicode()
    ours = ["".join(table[b] for b in p.encode("utf-8")) for p in gpt2_pieces(text)]
    assert "".join(gpt2_pieces(text)) == text
    if any(unassigned_here(c) for c in text):
        event("text holds a code point unassigned in Python's Unicode: round trip only")
        return
    assert ours == [p for p, _ in pre.pre_tokenize_str(text)]


def test_only_characters_unassigned_here_split_differently():
    # every code point below U+3000 (all the whitespace but U+3000 itself, which the strategy
    # draws) and every 61st above, in contexts that tell letters, numbers, spaces and symbols
    # apart: the pieces differ only where Python's Unicode database does not know the character
    pre = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    table = gpt2_bpe.bytes_to_unicode()
    differ, agree = [], 0
    for cp in list(range(0x3000)) + list(range(0x3000, 0x110000, 61)):
        if 0xD800 <= cp <= 0xDFFF:
            continue                                       # surrogates are not text
        c = chr(cp)
        text = f"a{c}a 1{c}1 .{c}. {c} x"
        ours = ["".join(table[b] for b in p.encode("utf-8")) for p in gpt2_pieces(text)]
        if ours != [p for p, _ in pre.pre_tokenize_str(text)]:
            differ.append(c)
        elif not unassigned_here(c):
            agree += 1
    assert agree > 15_000                                  # every assigned character sampled agrees
    assert all(unassigned_here(c) for c in differ), [hex(ord(c)) for c in differ if not unassigned_here(c)]


def test_byte_table_matches_the_byte_level_alphabet():
    table = gpt2_bpe.bytes_to_unicode()
    assert sorted(table) == list(range(256)) and len(set(table.values())) == 256
    assert set(table.values()) == set(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    assert table[ord(" ")] == "\u0120" and table[ord("A")] == "A" and table[0] == "\u0100"


def test_special_token_decodes_like_transformers(ours, hf):
    eot = ours.vocab["<|endoftext|>"]
    ids = [eot] + ours.encode("the dog") + [eot]
    assert ours.decode(ids) == hf.decode(ids) == "<|endoftext|>the dog<|endoftext|>"


def fails_the_check(ours, hf) -> bool:
    for text in FIXED_TEXTS:
        try:
            check_same_as_hf(ours, hf, text)
        except AssertionError:
            return True
    return False


def test_planted_bug_merge_out_of_rank_order_is_caught(folder, hf):
    class HighestRankFirst(GPT2Tokenizer):
        def bpe(self, piece):                              # the planted bug: the latest merge first
            tokens = [self.byte_encoder[b] for b in piece.encode("utf-8")]
            while True:
                pairs = [p for p in pairwise(tokens) if p in self.ranks]
                if not pairs:
                    return tokens
                tokens = gpt2_bpe.merge_pair(tokens, max(pairs, key=self.ranks.get))

    assert not fails_the_check(GPT2Tokenizer.from_folder(str(folder)), hf)
    assert fails_the_check(HighestRankFirst.from_folder(str(folder)), hf)


def test_planted_bug_wrong_byte_table_entry_is_caught(folder, hf, monkeypatch):
    good = gpt2_bpe.bytes_to_unicode()

    def swapped():                                         # the planted bug: "e" and "o" swapped
        table = dict(good)
        table[ord("e")], table[ord("o")] = good[ord("o")], good[ord("e")]
        return table

    monkeypatch.setattr(gpt2_bpe, "bytes_to_unicode", swapped)
    assert fails_the_check(GPT2Tokenizer.from_folder(str(folder)), hf)


def test_saved_dict_gives_the_same_tokenizer(ours):
    import json

    from npformer.data.tokenizers import tokenizer_from_dict
    restored = tokenizer_from_dict(json.loads(json.dumps(ours.to_dict())))
    for text in FIXED_TEXTS + ["a<|endoftext|>b"]:
        assert restored.encode(text) == ours.encode(text)


def test_the_piece_cache_stays_bounded_and_changes_no_ids(folder, hf, monkeypatch):
    tok = GPT2Tokenizer.from_folder(str(folder))
    monkeypatch.setattr(tok, "CACHE_SIZE", 8)
    text = " ".join(f"w{i}x{i * 7}" for i in range(60))        # 60+ distinct pieces
    first = tok.encode(text)
    assert len(tok.cache) <= 8
    assert first == tok.encode(text) == hf(text)["input_ids"]
