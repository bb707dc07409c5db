"""Bad input to the tokenizers: clear errors that name what was expected and what came."""
from __future__ import annotations

import json

import pytest

from npformer.data.tokenizers import (
    BPETokenizer,
    CharTokenizer,
    GPT2Tokenizer,
    WordPieceTokenizer,
    tokenizer_from_dict,
)


def write_gpt2_folder(path, merges_text="#version: 0.2\nh e\n"):
    from npformer.data.tokenizers.gpt2_bpe import bytes_to_unicode
    vocab = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
    vocab["he"] = len(vocab)
    vocab["ll"] = len(vocab)
    (path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (path / "merges.txt").write_text(merges_text, encoding="utf-8")
    return path


def write_bert_folder(path, tokens=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "##s")):
    (path / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return path


def test_good_folders_load(tmp_path):
    # the helpers write valid folders: every refusal below comes from the one thing broken
    gpt2 = GPT2Tokenizer.from_folder(str(write_gpt2_folder(tmp_path)))
    assert gpt2.decode(gpt2.encode("hello")) == "hello" and len(gpt2.encode("he")) == 1
    bert = WordPieceTokenizer.from_folder(str(write_bert_folder(tmp_path)))
    assert bert.tokenize("Hellos") == ["hello", "##s"]


@pytest.mark.parametrize("missing", ["vocab.json", "merges.txt"])
def test_gpt2_missing_file(tmp_path, missing):
    write_gpt2_folder(tmp_path)
    (tmp_path / missing).unlink()
    with pytest.raises(FileNotFoundError, match=f"{missing}: expected a file at .*{missing}"):
        GPT2Tokenizer.from_folder(str(tmp_path))


def test_bert_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="vocab.txt: expected a file at"):
        WordPieceTokenizer.from_folder(str(tmp_path))


@pytest.mark.parametrize("line", ["h e x", "he", "h  e", " e"])
def test_malformed_merges_line(tmp_path, line):
    write_gpt2_folder(tmp_path, f"#version: 0.2\nh e\n{line}\n")
    with pytest.raises(ValueError, match=r"merges.txt, line 3: expected two tokens separated by one space"):
        GPT2Tokenizer.from_folder(str(tmp_path))


def test_merge_of_unknown_tokens(tmp_path):
    write_gpt2_folder(tmp_path, "#version: 0.2\nh e\nhe llo\n")
    with pytest.raises(ValueError, match=r"expected every token of merge \('he', 'llo'\) in the vocab"):
        GPT2Tokenizer.from_folder(str(tmp_path))


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"a": "1"}', '{"a": -1}'])
def test_malformed_vocab_json(tmp_path, content):
    write_gpt2_folder(tmp_path)
    (tmp_path / "vocab.json").write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match="vocab.json: expected a JSON object of token"):
        GPT2Tokenizer.from_folder(str(tmp_path))


def test_vocab_txt_without_unk(tmp_path):
    write_bert_folder(tmp_path, tokens=("[PAD]", "[CLS]", "[SEP]", "hello"))
    with pytest.raises(ValueError, match=r"vocab.txt: expected the token \[UNK\]"):
        WordPieceTokenizer.from_folder(str(tmp_path))


def _all_tokenizers(tmp_path):
    return [CharTokenizer.train("abc"), BPETokenizer.train("abc abc", 300),
            GPT2Tokenizer.from_folder(str(write_gpt2_folder(tmp_path))),
            WordPieceTokenizer.from_folder(str(write_bert_folder(tmp_path)))]


@pytest.mark.parametrize("bad", [b"abc", None, ["a"], 3])
def test_encode_refuses_non_str(tmp_path, bad):
    for tok in _all_tokenizers(tmp_path):
        with pytest.raises(TypeError, match=f"text: expected str, got {type(bad).__name__}"):
            tok.encode(bad)


def test_training_refuses_non_str():
    with pytest.raises(TypeError, match="text: expected str, got bytes"):
        BPETokenizer.train(b"abc", 300)
    with pytest.raises(TypeError, match="text: expected str, got list"):
        CharTokenizer.train(["a"])


def test_decode_refuses_unknown_ids(tmp_path):
    for tok in _all_tokenizers(tmp_path):
        with pytest.raises(ValueError, match="ids: expected .*got 100000"):
            tok.decode([100000])
        with pytest.raises(ValueError, match="ids: expected .*got -1"):
            tok.decode([-1])


@pytest.mark.parametrize("d", [None, {}, {"type": "sentencepiece"}, {"type": "char"},
                               {"type": "bpe", "merges": [[3, 300]]}, {"type": "bpe", "merges": [[3]]},
                               {"type": "wordpiece"}, {"type": "gpt2_bpe", "vocab": {}}])
def test_tokenizer_from_bad_dict(d):
    with pytest.raises(ValueError, match="(tokenizer dict|merge 0): expected"):
        tokenizer_from_dict(d)


def test_min_count_below_one_is_refused():
    with pytest.raises(ValueError, match="min_count: expected an int >= 1, got 0"):
        BPETokenizer.train("abc", 300, min_count=0)


def test_duplicate_merge_keeps_its_first_rank(tmp_path):
    write_gpt2_folder(tmp_path, "#version: 0.2\nh e\nl l\nh e\n")
    tok = GPT2Tokenizer.from_folder(str(tmp_path))
    assert tok.ranks[("h", "e")] == 0
