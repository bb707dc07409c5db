"""Translation and classification tasks on a user's rows (npformer.data.text_tasks): the split, the
tokenizers trained on the training rows only, rows too long for the model, the label map, and a
checkpoint's metadata rebuilding the same task."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.data.registry import make_any_task
from npformer.data.tasks import BOS, EOS, PAD, ClassificationBatch, Seq2SeqBatch
from npformer.data.text_classify import build_classify_task
from npformer.data.text_files import TextFileError
from npformer.data.text_tasks import split_rows
from npformer.data.text_translate import build_translate_task
from npformer.data.tokenizers.char import UNK
from npformer.training.resume import BatchStream


def pairs_file(tmp_path, n=40):
    lines = [f"w{i} x{i % 7}\tW{i} X{i % 7}" for i in range(n)]
    p = tmp_path / "pairs.tsv"
    p.write_text("\n".join(lines) + "\n")
    return str(p), lines


def test_the_split_is_disjoint_complete_seeded_and_holds_out_the_fraction():
    tr, va = split_rows(100, 0.2, seed=3)
    assert len(va) == 20 and len(tr) == 80
    assert sorted(np.concatenate([tr, va]).tolist()) == list(range(100))
    again = split_rows(100, 0.2, seed=3)
    assert all((a == b).all() for a, b in zip((tr, va), again))
    assert not (split_rows(100, 0.2, seed=4)[1] == va).all()


def test_translation_batches_wrap_the_rows_with_eos_and_bos(tmp_path):
    path, lines = pairs_file(tmp_path)
    task = build_translate_task(path, context=16, val_fraction=0.25, seed=0)
    tr, va = task.sets()
    assert len(tr) == 30 and len(va) == 10
    assert not set(tr.index.tolist()) & set(va.index.tolist())
    ex = va.take(np.arange(2))
    b = ex.collate()
    assert isinstance(b, Seq2SeqBatch)
    for i, (src, tgt) in enumerate(task.texts(ex)):
        assert lines[ex.index[i]] == f"{src}\t{tgt}"
        s = task.tokenizer.encode(src) + [EOS]
        t = task.target_tokenizer.encode(tgt)
        assert b.src[i, : len(s)].tolist() == s and (b.src[i, len(s):] == PAD).all()
        assert b.tgt_in[i, : len(t) + 1].tolist() == [BOS] + t
        assert b.tgt_out[i, : len(t) + 1].tolist() == t + [EOS]


def test_the_tokenizers_are_trained_on_the_training_rows_only(tmp_path):
    p = tmp_path / "p.tsv"
    rows = [f"ab{i % 3}\tAB{i % 3}" for i in range(30)]
    p.write_text("\n".join(rows) + "\n")
    task = build_translate_task(str(p), context=16, val_fraction=0.2, seed=0)
    va_index = task.sets()[1].index
    p2 = tmp_path / "q.tsv"                     # a character only in one held-out row: "z" / "Z"
    rows[int(va_index[0])] = "abz\tABZ"
    p2.write_text("\n".join(rows) + "\n")
    task = build_translate_task(str(p2), context=16, val_fraction=0.2, seed=0)
    assert "z" not in task.tokenizer.chars and "Z" not in task.target_tokenizer.chars
    va = task.sets()[1]
    assert UNK in va.src[va.index == va_index[0]]


def test_a_shared_vocabulary_is_one_tokenizer_for_both_sides(tmp_path):
    path, _ = pairs_file(tmp_path)
    task = build_translate_task(path, shared_vocab=True, context=16)
    assert task.target_tokenizer is None and task.target_vocab.tokenizer is task.tokenizer
    assert task.config_fields() == dict(src_vocab_size=task.vocab_size,
                                        tgt_vocab_size=task.vocab_size, share_embeddings=True)
    assert "W" in task.tokenizer.chars and "w" in task.tokenizer.chars


def test_pairs_longer_than_the_context_are_left_out_and_reported(tmp_path):
    p = tmp_path / "p.tsv"
    rows = [f"a{i}\tb{i}" for i in range(20)]
    rows[4] = "a very long source sentence\tshort"
    p.write_text("\n".join(rows) + "\n")
    task = build_translate_task(str(p), context=8)
    tr, va = task.sets()
    assert 4 not in tr.index and 4 not in va.index and len(tr) + len(va) == 19
    assert "1 pairs with a side over 7 tokens left out (first at line 5" in task.describe()


def test_the_metadata_rebuilds_the_task_with_its_own_tokenizers(tmp_path):
    path, _ = pairs_file(tmp_path)
    task = build_translate_task(path, tokenizer="bpe", vocab_size=270, context=16, seed=2)
    again = make_any_task(**task.metadata())
    assert again.tokenizer.to_dict() == task.tokenizer.to_dict()
    assert again.target_tokenizer.to_dict() == task.target_tokenizer.to_dict()
    assert (again.heldout().index == task.heldout().index).all()
    ex = task.heldout(3)
    assert (again.heldout(3).collate().tgt_out == ex.collate().tgt_out).all()


def test_a_changed_file_is_refused_when_the_task_is_rebuilt(tmp_path):
    path, lines = pairs_file(tmp_path)
    meta = build_translate_task(path, context=16).metadata()
    with open(path, "a") as f:
        f.write("new\tNEW\n")
    with pytest.raises(TextFileError, match="has changed since the checkpoint"):
        make_any_task(**meta).sets()


def test_labels_map_to_sorted_ids_and_long_texts_are_cut(tmp_path):
    p = tmp_path / "l.tsv"
    rows = [f"text {i}\t{'spam' if i % 3 == 0 else 'ham'}" for i in range(30)]
    rows[7] = "x" * 50 + "\tham"
    p.write_text("\n".join(rows) + "\n")
    task = build_classify_task(str(p), context=12, val_fraction=0.2)
    assert task.labels == ["ham", "spam"] and task.num_classes == 2
    tr, va = task.sets()
    every = np.concatenate([tr.index, va.index])
    labels = np.concatenate([tr.labels, va.labels])
    for i, lab in zip(every, labels):
        assert task.labels[lab] == rows[i].split("\t")[1]
    b = tr.collate()
    assert isinstance(b, ClassificationBatch) and b.src.shape[1] <= 12
    assert "1 texts over 10 tokens cut" in task.describe()
    assert make_any_task(**task.metadata()).labels == ["ham", "spam"]


def test_a_file_with_one_label_is_refused(tmp_path):
    p = tmp_path / "l.tsv"
    p.write_text("a\tx\nb\tx\n")
    with pytest.raises(TextFileError, match="every row has the label 'x'"):
        build_classify_task(str(p))


def test_an_imbalanced_file_is_reported(tmp_path):
    p = tmp_path / "l.tsv"
    p.write_text("".join(f"t{i}\t{'rare' if i < 3 else 'common'}\n" for i in range(40)))
    assert "imbalanced" in build_classify_task(str(p)).describe()


def test_held_out_rows_repeated_from_the_training_rows_are_counted(tmp_path):
    p = tmp_path / "rep.tsv"                      # every text twice: most held-out rows repeat one
    p.write_text("".join(f"text {i % 20}\t{'ab'[i % 2]}\n" for i in range(40)))
    task = build_classify_task(str(p), val_fraction=0.25, seed=0)
    tr, va = task.sets()
    seen = {t for t, _ in task.texts(tr)}
    again = sum(t in seen for t, _ in task.texts(va))
    assert again > 0 and f"{again:,} held-out texts also occur in the training rows" in task.describe()
    q = tmp_path / "pairs.tsv"
    q.write_text("".join(f"s{i % 10}\tt{i % 10}\n" for i in range(30)))
    task = build_translate_task(str(q), context=16, val_fraction=0.3, seed=1)
    tr, va = task.sets()
    seen = {a for a, _ in task.texts(tr)}
    again = sum(a in seen for a, _ in task.texts(va))
    assert again > 0 and f"{again:,} held-out sources also occur" in task.describe()
    path, _ = pairs_file(tmp_path)                # distinct rows: no note
    assert "also occur" not in build_translate_task(path, context=16).describe()


def test_the_batch_stream_draws_training_rows_only_and_resumes(tmp_path):
    path, _ = pairs_file(tmp_path)
    task = build_translate_task(path, context=16)
    va = set(task.sets()[1].index.tolist())
    stream = BatchStream(task, 8, seed=1)
    first = [next(stream) for _ in range(3)]
    assert all(isinstance(b, Seq2SeqBatch) for b in first)
    rng = np.random.default_rng([1, 0xBA7C])
    drawn = [task.sample(rng, 8) for _ in range(3)]
    assert not set(np.concatenate([d.index for d in drawn]).tolist()) & va
    state = stream.state_dict()
    nxt = next(stream)
    again = BatchStream(task, 8, seed=1)
    again.load_state_dict(state)
    assert (next(again).src == nxt.src).all()


def test_a_label_column_of_text_is_pointed_out_and_not_listed_in_full(tmp_path):
    """Columns swapped (label<TAB>text) or a translation file given to classify: every row its own
    label. The description used to list all of them on one line and say nothing."""
    f = tmp_path / "swapped.tsv"
    f.write_text("".join(f"{'pos' if i % 2 else 'neg'}\tsome text number {i}\n" for i in range(100)),
                 encoding="utf-8")
    text = build_classify_task(str(f)).describe()
    first, *notes = text.splitlines()
    assert "100 labels (training rows: some text number 0 1, " in first
    assert ", and 88 more; majority-class rate" in first and "some text number 99" not in first
    assert any("labels occur in one training row only: the label column looks like text, not "
               "labels (the layout is text<TAB>label" in n for n in notes)


def test_a_few_labels_are_all_listed_without_the_note(tmp_path):
    f = tmp_path / "ok.tsv"
    f.write_text("".join(f"text {i}\t{'abcdefghijklm'[i % 13]}\n" for i in range(130)),
                 encoding="utf-8")
    text = build_classify_task(str(f)).describe()
    assert "13 labels" in text and "more;" not in text and "looks like text" not in text


@pytest.mark.parametrize("aligned", [False, True])
def test_one_pair_is_refused_naming_the_file(tmp_path, aligned):
    if aligned:
        (tmp_path / "s.txt").write_text("hello\n")
        (tmp_path / "t.txt").write_text("bonjour\n")
        paths = [str(tmp_path / "s.txt"), str(tmp_path / "t.txt")]
    else:
        (tmp_path / "one.tsv").write_text("hello\tbonjour\n")
        paths = [str(tmp_path / "one.tsv")]
    with pytest.raises(TextFileError) as e:
        build_translate_task(paths)
    assert str(e.value).startswith(f"--data {' '.join(paths)}: ")
    assert "1 pair" in str(e.value) and "at least 2" in str(e.value)
