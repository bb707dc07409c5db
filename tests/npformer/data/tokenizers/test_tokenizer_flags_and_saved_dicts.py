"""Every tokenizer's flags are bools and its counts integers (Python's or NumPy's), and a saved
tokenizer dict of the wrong types is a ValueError, so a damaged checkpoint is one line naming it.

Before: a truthy non-bool switched a flag on (`encode(text, add_bos="no")` added BOS; a saved
`"lowercase": "false"` lowercased), `BPETokenizer.train(text, np.int64(300))` was refused as not an
int, a merge `[true, 2]` loaded as the pair (1, 2), and saved dicts with non-string WordPiece tokens
or an int for GPT-2's special tokens ended `generate`/`evaluate`/`--resume` in a TypeError traceback.
"""
import json
import re

import numpy as np
import pytest

from npformer.cli.main import main
from npformer.data.tokenizers import (
    BPETokenizer,
    CharTokenizer,
    GPT2Tokenizer,
    WordPieceTokenizer,
    tokenizer_from_dict,
)
from npformer.data.tokenizers.gpt2_bpe import bytes_to_unicode
from tests.npformer.conftest import tiny_train_args
from tests.npformer.data.test_saved_tokenizer_fits_model import edited_copy

TEXT = "the cat sat on the mat and the dog sat on the log " * 5
WP = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat"]


def gpt2() -> GPT2Tokenizer:
    return GPT2Tokenizer({c: i for i, c in enumerate(bytes_to_unicode().values())}, [])


CALLS = [
    ("add_bos", lambda v: CharTokenizer.train(TEXT).encode("cat", add_bos=v)),
    ("add_eos", lambda v: CharTokenizer.train(TEXT).encode("cat", add_eos=v)),
    ("add_bos", lambda v: BPETokenizer.train(TEXT, 270).encode("cat", add_bos=v)),
    ("add_eos", lambda v: BPETokenizer.train(TEXT, 270).encode("cat", add_eos=v)),
    ("add_special_tokens", lambda v: WordPieceTokenizer(WP).encode("cat", add_special_tokens=v)),
    ("skip_special_tokens", lambda v: WordPieceTokenizer(WP).decode([2, 6], skip_special_tokens=v)),
    ("lowercase", lambda v: WordPieceTokenizer(WP, lowercase=v)),
    ("skip_special_tokens", lambda v: gpt2().decode([70], skip_special_tokens=v)),
]


@pytest.mark.parametrize("name,call", CALLS, ids=[f"{i}-{c[0]}" for i, c in enumerate(CALLS)])
@pytest.mark.parametrize("value", ["no", 0, 1, None, np.bool_(True)])
def test_a_flag_that_is_not_a_bool_is_refused_by_name(name, call, value):
    with pytest.raises(TypeError, match=f"^{name}: expected a bool, got "):
        call(value)
    call(True), call(False)                                     # the bools still work


def test_bpe_counts_may_be_numpy_integers_and_give_the_same_merges():
    plain = BPETokenizer.train(TEXT, 270, 2)
    numpy = BPETokenizer.train(TEXT, np.int64(270), np.int32(2))
    assert numpy.merges == plain.merges and all(type(i) is int for m in numpy.merges for i in m)
    for bad in (True, 270.0, "270"):
        with pytest.raises(ValueError, match="vocab_size: expected an int >= 259"):
            BPETokenizer.train(TEXT, bad)


@pytest.mark.parametrize("d,says", [
    ({"type": "bpe", "merges": [[True, 2]]}, "merge 0: expected a pair of ids below 259"),
    ({"type": "wordpiece", "tokens": [1, 2, 3]}, "'tokens': [str, ...]"),
    ({"type": "wordpiece", "tokens": WP, "lowercase": "false"}, "'lowercase': true or false"),
    ({"type": "gpt2_bpe", "vocab": {"a": 0}, "merges": [], "special_tokens": 5},
     "special_tokens: expected a list of strings"),
    ({"type": "gpt2_bpe", "vocab": {"a": "0"}, "merges": []}, "vocab: expected token string"),
    ({"type": "gpt2_bpe", "vocab": {"a": True}, "merges": []}, "vocab: expected token string"),
    ({"type": "gpt2_bpe", "vocab": {"a": 0}, "merges": [5]}, "merges: expected pairs"),
])
def test_a_saved_dict_of_the_wrong_types_is_a_value_error(d, says):
    with pytest.raises(ValueError, match=re.escape(says)) as err:
        tokenizer_from_dict(d)
    assert str(err.value).startswith("tokenizer dict: ")


def test_saved_dicts_still_round_trip():
    for tok in (CharTokenizer.train(TEXT), BPETokenizer.train(TEXT, 270),
                WordPieceTokenizer(WP, lowercase=False), gpt2()):
        back = tokenizer_from_dict(json.loads(json.dumps(tok.to_dict())))
        assert back.to_dict() == tok.to_dict()


def test_a_checkpoint_with_a_damaged_saved_tokenizer_is_one_line(tmp_path, capsys):
    (tmp_path / "corpus.txt").write_text(TEXT * 4, encoding="utf-8")
    lm = tmp_path / "lm.npz"
    argv = [*tiny_train_args(max_len=None, num_symbols=None, steps=1), "--task", "lm", "--data",
            str(tmp_path / "corpus.txt"), "--context", "16", "--save", str(lm)]
    assert main(["train", *argv]) == 0
    bad = tmp_path / "bad.npz"
    edited_copy(lm, bad, lambda task: task.update(tokenizer={"type": "wordpiece", "tokens": [1]}))
    for command in (["generate", str(bad), "the"], ["evaluate", str(bad)],
                    ["train", "--resume", str(bad), "--steps", "1", "--no-progress"]):
        capsys.readouterr()
        assert main(command) == 2, command
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(bad) in err[0] and "tokenizer dict" in err[0], (command, err)
