"""TextMLMTask: BERT's masked-token rows cut from a text corpus with a WordPiece vocabulary."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.data.registry import make_any_task
from npformer.data.text_mlm import TextMLMTask
from npformer.data.tokenizers import CharTokenizer, WordPieceTokenizer
from npformer.data.vocab import PAD

WORDS = "the cat sat on a mat and ran to big red house dog saw it".split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture
def task(tmp_path):
    rng = np.random.default_rng(0)
    text = "\n".join(" ".join(rng.choice(WORDS, 8)) for _ in range(200)) + "\n"
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    tok = WordPieceTokenizer(SPECIALS + WORDS)
    return TextMLMTask([str(path)], tok, context=12, seed=3)


def test_rows_are_cls_window_sep_and_only_word_positions_are_scored(task):
    from npformer.data.tasks import collate
    batch = collate(task.sample(np.random.default_rng(1), 64))
    cls, sep, mask = (task.tokenizer.vocab[t] for t in ("[CLS]", "[SEP]", "[MASK]"))
    assert batch.ids.shape == batch.targets.shape == batch.clean.shape == (64, 12)
    assert (batch.clean[:, 0] == cls).all() and (batch.clean[:, -1] == sep).all()
    scored = batch.targets != PAD
    assert scored.any(axis=1).all()                               # every row has a target
    assert not scored[:, 0].any() and not scored[:, -1].any()     # never [CLS] / [SEP]
    np.testing.assert_array_equal(batch.targets[scored], batch.clean[scored])
    np.testing.assert_array_equal(batch.ids[~scored], batch.clean[~scored])
    assert (batch.ids[scored] == mask).mean() > 0.5               # 80 % become [MASK]
    assert 0.05 < scored[:, 1:-1].mean() < 0.3                    # about 15 % selected


def test_held_out_masks_repeat_and_do_not_depend_on_batch_size(task):
    starts = task.heldout(100)
    a = [b for _, b, _ in task.iterate(starts, 5)]
    b = [b for _, b, _ in task.iterate(starts, 50)]
    np.testing.assert_array_equal(np.concatenate([x.ids for x in a]),
                                  np.concatenate([x.ids for x in b]))
    one = np.concatenate([o.targets for _, _, o in task.iterate(starts, 7)])
    assert ((one != PAD).sum(axis=1) == 1).all()                  # single-mask rows: one each


def test_metadata_rebuilds_the_same_task(task):
    again = make_any_task(**task.metadata())
    assert isinstance(again, TextMLMTask)
    np.testing.assert_array_equal(again.arrays()[0], task.arrays()[0])
    assert again.mask_prob == task.mask_prob and again.context == task.context


def test_bad_tokenizers_and_short_text_are_named(task, tmp_path):
    path = task.files[0]
    with pytest.raises(ValueError, match="tokenizer: expected a WordPiece"):
        TextMLMTask([path], CharTokenizer.train("abc"))
    with pytest.raises(ValueError, match=r"expected \[PAD\] at id 0"):
        TextMLMTask([path], WordPieceTokenizer(["[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]"]))
    short = tmp_path / "short.txt"
    short.write_text("the cat\n" * 3, encoding="utf-8")
    with pytest.raises(Exception, match="too short for --context 12"):
        TextMLMTask([str(short)], task.tokenizer, context=12).arrays()
