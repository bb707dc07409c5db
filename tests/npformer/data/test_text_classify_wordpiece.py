"""ClassifyTask with a BERT folder's WordPiece tokenizer: each row is what BERT reads, [CLS] text
[SEP] padded with [PAD] (the ids transformers' BertTokenizerFast gives), long texts cut to the
context with [SEP] kept, and the task rebuilt from its metadata batches the same rows."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.data.registry import make_any_task
from npformer.data.text_classify import ClassifyTask
from npformer.data.text_rows import read_labelled
from npformer.data.tokenizers import WordPieceTokenizer

transformers = pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")
pytest.importorskip("torch")

TEXTS = ["Paris is the capital of France.", "the lazy dog", "Rome is in Italy; Madrid is in Spain.",
         "fox", "Alan Turing theorized that machines could think; they're learning."]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from tests.npformer.io.tiny_folders import bert_folder
    return bert_folder(tmp_path_factory.mktemp("bert"))


def task_on(tmp_path, folder, context):
    path = tmp_path / "rows.tsv"
    path.write_text("".join(f"{t}\t{'ab'[i % 2]}\n" for i, t in enumerate(TEXTS * 4)),
                    encoding="utf-8")
    rows = read_labelled(str(path))
    return ClassifyTask(rows.files, WordPieceTokenizer.from_folder(str(folder)), ["a", "b"],
                        context=context, rows=rows)


def test_rows_are_berts_padded_input_ids(tmp_path, folder):
    task = task_on(tmp_path, folder, context=64)
    batch = task.examples_from_text(TEXTS).collate()
    ref = transformers.BertTokenizerFast(str(folder / "vocab.txt"), do_lower_case=True)
    want = ref(TEXTS, padding=True)
    np.testing.assert_array_equal(batch.src, np.asarray(want["input_ids"]))
    np.testing.assert_array_equal(batch.lengths, np.asarray(want["attention_mask"]).sum(axis=1))


def test_long_texts_are_cut_keeping_sep_and_metadata_rebuilds_the_task(tmp_path, folder):
    task = task_on(tmp_path, folder, context=6)
    ref = transformers.BertTokenizerFast(str(folder / "vocab.txt"), do_lower_case=True)
    want = ref(TEXTS, truncation=True, max_length=6, padding=True)["input_ids"]
    np.testing.assert_array_equal(task.examples_from_text(TEXTS).collate().src, np.asarray(want))
    over = 4 * sum(len(ref(t, add_special_tokens=False)["input_ids"]) > 4 for t in TEXTS)
    assert 0 < over < 4 * len(TEXTS)
    assert f"{over} texts over 4 tokens cut" in task.describe() and task.truncated == over
    again = make_any_task(**task.metadata())
    for a, b in zip(task.heldout().collate(), again.heldout().collate()):
        np.testing.assert_array_equal(a, b)
    sample = task.sample(np.random.default_rng(0), 5).collate()
    assert (sample.src[:, 0] == ref.cls_token_id).all()
    assert (sample.src[np.arange(5), sample.lengths - 1] == ref.sep_token_id).all()
