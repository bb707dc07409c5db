"""WordPieceTokenizer equals transformers' BertTokenizerFast on a vocab.txt trained offline.

The vocabulary is trained by the `tokenizers` library's WordPiece trainer (BertWordPieceTokenizer)
on a generated corpus with accents, CJK, punctuation and upper case, and written as vocab.txt, what
a BERT folder holds; both tokenizers read that folder, uncased (lower-casing and accent stripping)
and cased. Ids with and without [CLS]/[SEP], and decoded text, must agree on every Hypothesis text.
A planted bug (a continuation piece looked up without "##") must be caught by the same comparison.
"""
from __future__ import annotations

import pytest
from hypothesis import event, given

from npformer.data.tokenizers import WordPieceTokenizer
from npformer.data.tokenizers import wordpiece as wordpiece_module
from npformer.data.tokenizers.wordpiece import basic_tokenize

from .corpora import mixed_corpus
from .text_strategies import text_settings, texts
from .unicode_versions import version_dependent

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

FIXED_TEXTS = ["The quick brown fox jumps over the lazy dog.", "Héllo WÖRLD, it's 12345 o'clock!",
               "日本語の文 and tokenizers' merges", "unbelievably tired hunters, walking"]


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def pair(request, tmp_path_factory):
    lowercase = request.param
    path = tmp_path_factory.mktemp("bert_tokenizer")
    trainer = tokenizers.BertWordPieceTokenizer(lowercase=lowercase)
    trainer.train_from_iterator([mixed_corpus(seed=1)], vocab_size=600, min_frequency=2,
                                show_progress=False)
    trainer.save_model(str(path))
    hf = transformers.BertTokenizerFast.from_pretrained(str(path), do_lower_case=lowercase)
    return WordPieceTokenizer.from_folder(str(path), lowercase=lowercase), hf, path


def hf_words(hf, text: str) -> list[str]:
    """transformers' words before WordPiece: its normalizer, then its pre-tokenizer."""
    backend = hf.backend_tokenizer
    return [w for w, _ in backend.pre_tokenizer.pre_tokenize_str(backend.normalizer.normalize_str(text))]


def version_dependent_differences(ours, hf, text: str) -> list[str]:
    """The characters of text that the two classify differently, alone between two letters; each
    must be one that Unicode versions disagree on (unicode_versions.py)."""
    differ = [c for c in sorted(set(text))
              if hf_words(hf, f"a{c}b") != basic_tokenize(f"a{c}b", ours.lowercase)]
    assert all(version_dependent(c) for c in differ), \
        f"classified differently but stable across Unicode versions: {[hex(ord(c)) for c in differ]}"
    return differ


def check_same_as_hf(ours, hf, text: str) -> None:
    ids = ours.encode(text)
    if version_dependent_differences(ours, hf, text):
        event("text holds a character HF's Unicode tables classify differently: skipped")
        return
    assert ids == hf(text)["input_ids"], f"ids differ on {text!r}"
    assert ours.encode(text, add_special_tokens=False) == hf(text, add_special_tokens=False)["input_ids"]
    assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=True), f"decode differs on {text!r}"
    assert ours.decode(ids, skip_special_tokens=False) == hf.decode(ids), f"decode differs on {text!r}"


def test_vocabulary_is_nontrivial(pair):
    ours, hf, _ = pair
    assert ours.vocab_size == len(hf) and sum(t.startswith("##") for t in ours.tokens) > 50
    tokens = ours.tokenize("tired hunters walking through forests")
    assert any(t.startswith("##") for t in tokens) and "[UNK]" not in tokens


@pytest.mark.parametrize("text", FIXED_TEXTS + ["", "   ", "a" * 101, "\x00\ufffd", "𫠠x", "𫤠x",
                                               "Paris is the [MASK] of France.", "[mask][MASK][CLS]x[SEP",
                                               "AΣ tΣ. σΣ", "İstanbul"])
def test_fixed_texts_match_transformers(pair, text):
    ours, hf, _ = pair
    check_same_as_hf(ours, hf, text)


@text_settings()
@given(texts)
def test_ids_and_decode_match_transformers(pair, text):
    ours, hf, _ = pair
    check_same_as_hf(ours, hf, text)


def test_only_characters_unicode_versions_disagree_on_differ(pair):
    # every 13th code point between two letters: the words differ only on characters whose
    # category changed since Unicode 3.2 or that Python's database does not know, and on few
    ours, hf, _ = pair
    sample = [chr(cp) for cp in range(0, 0x110000, 13) if not 0xD800 <= cp <= 0xDFFF]
    differ = version_dependent_differences(ours, hf, "".join(sample))
    assert len(differ) < 0.002 * len(sample), len(differ)


def test_planted_bug_continuation_without_hashes_is_caught(pair, monkeypatch):
    ours, hf, _ = pair

    def no_hashes(word, vocab, unk="[UNK]"):              # the planted bug: "##" left off
        if len(word) > wordpiece_module.MAX_WORD_CHARS:
            return [unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start and word[start:end] not in vocab:
                end -= 1
            if end == start:
                return [unk]
            pieces.append(word[start:end])
            start = end
        return pieces

    assert not any(_fails(ours, hf, t) for t in FIXED_TEXTS)
    monkeypatch.setattr(wordpiece_module, "wordpiece", no_hashes)
    assert any(_fails(ours, hf, t) for t in FIXED_TEXTS)


def _fails(ours, hf, text) -> bool:
    try:
        check_same_as_hf(ours, hf, text)
    except AssertionError:
        return True
    return False


def test_saved_dict_gives_the_same_tokenizer(pair):
    import json

    from npformer.data.tokenizers import tokenizer_from_dict
    ours, _, _ = pair
    restored = tokenizer_from_dict(json.loads(json.dumps(ours.to_dict())))
    assert restored.lowercase == ours.lowercase
    for text in FIXED_TEXTS:
        assert restored.encode(text) == ours.encode(text)
