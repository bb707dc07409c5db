"""Tokenizer files from outside, fuzzed: GPT-2's vocab.json + merges.txt and BERT's vocab.txt, and the
tokenizer dict a checkpoint carries, mutated (bytes, JSON fields). Each loads or raises a ValueError
naming the file (or, for the dict, `tokenizer dict`); never another exception type (the rule:
tests/fuzz_files.py)."""
from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npformer.data.tokenizers import (
    BPETokenizer,
    CharTokenizer,
    GPT2Tokenizer,
    WordPieceTokenizer,
    tokenizer_from_dict,
)
from tests.fuzz_files import (
    byte_mutations,
    draw_json_mutation,
    dumps,
    fuzz_settings,
    loads_or_names_the_file,
    mutate_bytes,
)

TEXT = "the cat sat on the mat; the dog ran to the log. " * 8


class Folder(str):
    def __repr__(self):
        return "Folder(tokenizer files)"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """vocab.json and merges.txt of a byte-level BPE over TEXT (GPT-2's layout), vocab.txt."""
    path = tmp_path_factory.mktemp("tok")
    table = GPT2Tokenizer.__init__.__globals__["bytes_to_unicode"]()
    vocab = {table[b]: b for b in range(256)}
    merges = [("t", "h"), ("th", "e"), ("a", "t"), ("Ġ", "c")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    (path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (path / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges),
                                     encoding="utf-8")
    (path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\n##s\n",
                                    encoding="utf-8")
    return Folder(path)


def _copy(folder, tmp_path_factory):
    dest = tmp_path_factory.mktemp("m") / "tok"
    shutil.copytree(folder, dest)
    return dest


def _use(tok):
    """A loaded tokenizer must also work: encode and decode a text."""
    ids = tok.encode("the cat")
    tok.decode(ids)


@fuzz_settings(60)
@given(name=st.sampled_from(["vocab.json", "merges.txt", "vocab.txt"]), ops=byte_mutations)
def test_mutated_tokenizer_files_load_or_name_the_file(folder, tmp_path_factory, name, ops):
    path = _copy(folder, tmp_path_factory)
    f = path / name
    f.write_bytes(mutate_bytes(f.read_bytes(), ops))
    load = WordPieceTokenizer.from_folder if name == "vocab.txt" else GPT2Tokenizer.from_folder
    tok = loads_or_names_the_file(lambda: load(str(path)), f, (ValueError,))
    if tok is not None:
        loads_or_names_the_file(lambda: _use(tok), f, (ValueError,))


@fuzz_settings(60)
@given(data=st.data())
def test_mutated_vocab_json_fields_name_the_file(folder, tmp_path_factory, data):
    path = _copy(folder, tmp_path_factory)
    f = path / "vocab.json"
    f.write_text(dumps(draw_json_mutation(data, json.loads(f.read_text()))), encoding="utf-8",
                 errors="surrogatepass")
    tok = loads_or_names_the_file(lambda: GPT2Tokenizer.from_folder(str(path)), f, (ValueError,))
    if tok is not None:
        loads_or_names_the_file(lambda: _use(tok), f, (ValueError,))


DICTS = [CharTokenizer.train(TEXT).to_dict(), BPETokenizer.train(TEXT, 270).to_dict()]


@fuzz_settings(60)
@given(data=st.data(), which=st.sampled_from([0, 1]))
def test_mutated_tokenizer_dicts_are_named_errors(data, which):
    d = draw_json_mutation(data, DICTS[which])
    try:
        tok = tokenizer_from_dict(d)
    except ValueError as e:
        assert "tokenizer dict" in str(e), e
        return
    _use(tok)
