"""The text tasks' `vocab_size` (the API of `--vocab-size`) given a string or a float is a TypeError
naming `vocab_size` before any file is read: `build_text_task(..., vocab_size="300")` ended in
`'<' not supported between instances of 'str' and 'int'`, naming nothing."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.data.text_classify import build_classify_task
from npformer.data.text_lm import build_text_task
from npformer.data.text_translate import build_translate_task

WRONG = [("300", "str '300'"), (300.0, "float 300.0"), (float("inf"), "float inf"), (True, "bool True")]


@pytest.mark.parametrize("value, shown", WRONG)
def test_the_language_model_task_names_vocab_size_before_reading(value, shown):
    expected = rf"^vocab_size: expected None or an int \(>= 259, for tokenizer 'bpe'\), got {shown}$"
    with pytest.raises(TypeError, match=expected):
        build_text_task(["no-such-file.txt"], tokenizer="bpe", vocab_size=value)


def test_translation_and_classification_name_vocab_size(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"a {i}\tb {i}\n" for i in range(20)), encoding="utf-8")
    labelled = tmp_path / "labelled.tsv"
    labelled.write_text("".join(f"text {i}\t{'ab'[i % 2]}\n" for i in range(20)), encoding="utf-8")
    with pytest.raises(TypeError, match=r"^vocab_size: expected None or an int .* got str '300'$"):
        build_translate_task([str(pairs)], tokenizer="bpe", vocab_size="300", context=16)
    with pytest.raises(TypeError, match=r"^vocab_size: expected None or an int .* got str '300'$"):
        build_classify_task(str(labelled), tokenizer="bpe", vocab_size="300", context=16)


def test_an_integer_of_any_kind_is_taken(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("the cat sat on the mat. " * 40, encoding="utf-8")
    for size in (260, np.int64(260)):
        task = build_text_task([str(text)], tokenizer="bpe", vocab_size=size, context=16)
        assert task.tokenizer.vocab_size <= 260
