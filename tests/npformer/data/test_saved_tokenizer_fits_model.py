"""A checkpoint whose saved tokenizer does not fit its model (more tokens than the embedding has rows,
or no tokenizer at all: a hand-edited header, metadata copied from another run) is refused when it is
loaded by generate, evaluate, train --resume and load_training_state, in one line naming the file.

Before: generate decoded with ids the model has no row for (an out-of-range id error at the first
unseen character, garbage otherwise), evaluate blamed --num-symbols, --resume trained on silently, and
a missing tokenizer was a TypeError traceback."""
import json

import numpy as np
import pytest

import npformer as nf
from npformer.cli.main import main
from npformer.io.checkpoint import CheckpointError
from tests.npformer.conftest import tiny_train_args

ARGS = tiny_train_args(max_len=None, num_symbols=None, steps=1)
ROWS = {"lm": "".join(f"line {i} of some text to model\n" for i in range(200)),
        "translate": "".join(f"a{i % 7} b c\tc b a{i % 7}\n" for i in range(200)),
        "classify": "".join(f"text number {i}\t{'odd' if i % 2 else 'even'}\n" for i in range(200))}
INPUT = {"lm": "line", "translate": "a1 b c", "classify": "text number 3"}
EXTRA = "".join(chr(0x400 + i) for i in range(40))        # 40 characters the corpus never had


def train_run(tmp_path, task):
    (tmp_path / "corpus.txt").write_text(ROWS[task], encoding="utf-8")
    assert main(["train", *ARGS, "--task", task, "--data", "corpus.txt", "--context", "24",
                 "--save", "run.npz"]) == 0
    return tmp_path / "run.npz"


def edited_copy(src, dst, edit):
    """`src` with its header's task metadata passed through `edit` (arrays unchanged)."""
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays["header"]))
    edit(header["metadata"]["task"])
    arrays["header"] = np.array(json.dumps(header))
    np.savez(dst, **arrays)
    return header


def rows_of(path, key):
    with np.load(path, allow_pickle=False) as z:
        return z[f"model/{key}"].shape[0]


def commands(path, task):
    return [["generate", str(path), INPUT[task]], ["evaluate", str(path)],
            ["train", "--resume", str(path), "--steps", "1", "--no-progress"]]


def one_error_line(argv, capsys):
    capsys.readouterr()
    assert main(argv) == 2, argv
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


EMBEDDING = {"lm": "tgt_embed.weight", "translate": "src_embed.weight",
             "classify": "src_embed.weight"}


@pytest.mark.parametrize("task", ["lm", "translate", "classify"])
def test_a_tokenizer_larger_than_the_embedding_is_refused_by_every_command(task, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = train_run(tmp_path, task)
    bad = tmp_path / "big.npz"

    def grow(meta):
        meta["tokenizer"]["chars"] += EXTRA
    header = edited_copy(good, bad, grow)
    tokens = len(header["metadata"]["task"]["tokenizer"]["chars"]) + 4   # + PAD, BOS, EOS, UNK
    rows = rows_of(good, EMBEDDING[task])
    assert tokens > rows
    for argv in commands(bad, task):
        line = one_error_line(argv, capsys)
        assert str(bad) in line, line
        assert f"tokenizer has {tokens} tokens" in line and f"embedding has {rows} rows" in line
    with pytest.raises(CheckpointError, match=f"tokenizer has {tokens} tokens"):
        nf.load_training_state(bad)
    assert main(commands(good, task)[0]) == 0                # the unedited checkpoint still works


def test_a_translation_target_tokenizer_larger_than_its_embedding_is_refused(tmp_path, capsys,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = train_run(tmp_path, "translate")
    bad = tmp_path / "big_target.npz"

    def grow(meta):
        meta["target_tokenizer"]["chars"] += EXTRA
    header = edited_copy(good, bad, grow)
    tokens = len(header["metadata"]["task"]["target_tokenizer"]["chars"]) + 4
    rows = rows_of(good, "tgt_embed.weight")
    for argv in commands(bad, "translate"):
        line = one_error_line(argv, capsys)
        assert f"target char tokenizer has {tokens} tokens" in line
        assert f"target embedding has {rows} rows" in line


@pytest.mark.parametrize("task", ["lm", "classify"])
def test_a_missing_tokenizer_is_one_line_naming_the_file(task, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = train_run(tmp_path, task)
    bad = tmp_path / "no_tokenizer.npz"
    edited_copy(good, bad, lambda meta: meta.pop("tokenizer"))
    for argv in commands(bad, task):
        line = one_error_line(argv, capsys)                  # was a TypeError traceback
        assert str(bad) in line and "tokenizer: expected the tokenizer" in line, line
    with pytest.raises(CheckpointError, match="tokenizer: expected the tokenizer"):
        nf.load_training_state(bad)


def test_a_classify_checkpoint_with_more_labels_than_classes_is_refused(tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = train_run(tmp_path, "classify")
    bad = tmp_path / "labels.npz"
    edited_copy(good, bad, lambda meta: meta["labels"].append("third"))
    classes = rows_of(good, "classifier.weight")
    line = one_error_line(["generate", str(bad), INPUT["classify"]], capsys)
    assert f"expected the {classes} classes the model's head outputs, got {classes + 1}" in line
