"""What every tokenizer's decode accepts as token ids (npformer.data.tokenizers.ids): integers in a
1-D sequence; a string, a float, a bool or a 2-D array is refused naming `ids`, never truncated,
read digit by digit or failed on deep inside."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.data.tokenizers import BPETokenizer, CharTokenizer, GPT2Tokenizer, WordPieceTokenizer
from npformer.data.tokenizers.ids import token_ids
from tests.npformer.data.tokenizers.test_tokenizer_bad_input import (
    write_bert_folder,
    write_gpt2_folder,
)


@pytest.fixture(params=["char", "bpe", "gpt2", "wordpiece"])
def tokenizer(request, tmp_path):
    if request.param == "char":
        return CharTokenizer.train("hello world")
    if request.param == "bpe":
        return BPETokenizer.train("hello hello world", vocab_size=262)
    if request.param == "gpt2":
        return GPT2Tokenizer.from_folder(str(write_gpt2_folder(tmp_path)))
    return WordPieceTokenizer.from_folder(str(write_bert_folder(tmp_path)))


@pytest.mark.parametrize("ids, error, message", [
    ("45", TypeError, "ids: expected a sequence of integer token ids, got str '45'"),
    ([5, 6.7], TypeError, "ids: expected integer token ids, got float 6.7 at position 1"),
    ([np.float64(5.0)], TypeError, "ids: expected integer token ids, got float64 5.0 at position 0"),
    ([True], TypeError, "ids: expected integer token ids, got bool True at position 0"),
    ([np.True_], TypeError, "ids: expected integer token ids, got bool True at position 0"),
    (np.array([[5, 6]]), ValueError, r"ids: expected a 1-D sequence of token ids, got shape \(1, 2\)"),
    (np.array(5), ValueError, r"ids: expected a 1-D sequence of token ids, got shape \(\)"),
    (5, TypeError, "ids: expected a sequence of integer token ids, got int"),
])
def test_decode_refuses_what_is_not_a_row_of_integer_ids(tokenizer, ids, error, message):
    with pytest.raises(error, match=message):
        tokenizer.decode(ids)


def test_decode_takes_lists_tuples_and_integer_arrays_alike(tokenizer):
    ids = tokenizer.encode("hello")
    as_list = tokenizer.decode(ids)
    assert as_list.strip().lower().startswith("hello")
    assert tokenizer.decode(tuple(ids)) == as_list
    assert tokenizer.decode(np.asarray(ids, dtype=np.int32)) == as_list
    assert tokenizer.decode([np.int64(i) for i in ids]) == as_list


def test_token_ids_names_the_position_of_an_id_out_of_range():
    with pytest.raises(ValueError, match=r"ids: expected token ids in \[0, 10\), got 12 at position 2"):
        token_ids([1, 2, 12], 10)
    assert token_ids(range(3), 10) == [0, 1, 2]


def test_token_ids_reads_a_torch_integer_tensor():
    torch = pytest.importorskip("torch")
    assert token_ids(torch.tensor([3, 4])) == [3, 4]
    with pytest.raises(TypeError, match="ids: expected integer token ids"):
        token_ids(torch.tensor([3.0]))
