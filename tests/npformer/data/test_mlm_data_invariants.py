"""Invariants of the masked-LM data (npformer.data.mlm_data): which ids a selection, a random
replacement and an evaluation mask may touch, and that a seed gives bit-identical batches."""
import numpy as np
import pytest

from npformer.data.mlm_data import MirrorTask
from npformer.data.tasks import collate
from npformer.data.vocab import BOS, EOS, NUM_SPECIAL, PAD


@pytest.fixture(scope="module")
def task():
    return MirrorTask(num_symbols=4, min_len=1, max_len=6, mask_prob=0.5)


def _batch(task, n=3000, seed=0):
    return collate(task.sample(np.random.default_rng(seed), n))


def test_word_ids_are_the_letters_and_hash_only(task):
    # ids 3..6 letters a..d, 7 "#", 8 [MASK]: written out for num_symbols=4
    assert task.word_ids.tolist() == [3, 4, 5, 6, 7]
    assert (task.hash_id, task.mask_id, task.vocab_size) == (7, 8, 9)


def test_selection_touches_only_words_and_every_row_is_scored(task):
    b = _batch(task)
    sel = b.targets != PAD
    assert np.isin(b.clean[sel], task.word_ids).all()              # never BOS / EOS / PAD
    assert (b.targets[sel] == b.clean[sel]).all()
    assert (b.ids[~sel] == b.clean[~sel]).all()                    # unselected: untouched
    assert sel.any(axis=1).all()
    assert ((b.clean == BOS) == (np.arange(b.clean.shape[1]) == 0)[None, :]).all()


def test_random_replacements_draw_every_word_id_and_nothing_else(task):
    """A replaced position holds a word id (a letter or "#"), never a special id or [MASK];
    over 3000 rows every word id, "#" included, is drawn as a replacement."""
    b = _batch(task)
    sel = b.targets != PAD
    changed = sel & (b.ids != b.clean) & (b.ids != task.mask_id)
    drawn = set(np.unique(b.ids[changed]).tolist())
    assert drawn == set(task.word_ids.tolist())
    assert set(np.unique(b.ids).tolist()) <= {PAD, BOS, EOS, *task.word_ids.tolist(), task.mask_id}


def test_mask_prob_read_from_the_task_takes_effect(task):
    """mask_prob 0.5 (not the default 0.15): about half of the word positions are selected."""
    b = _batch(task)
    words = np.isin(b.clean, task.word_ids)
    frac = (b.targets != PAD)[words].mean()
    assert abs(frac - 0.5) < 0.02, frac


def test_single_mask_evaluation_masks_exactly_one_letter_per_row(task):
    ex = task.heldout(400)
    b = task.single_mask(ex, np.random.default_rng(3))
    sel = b.targets != PAD
    assert (sel.sum(axis=1) == 1).all()
    picked = b.clean[sel]
    assert ((picked >= NUM_SPECIAL) & (picked < task.hash_id)).all()   # a letter, never "#"
    assert (b.ids[sel] == task.mask_id).all() and (b.ids[~sel] == b.clean[~sel]).all()
    # every letter position can be picked: the first and the last letters of the rows both occur
    pos = np.argmax(sel, axis=1)
    assert (pos == 1).any() and (pos == b.lengths - 2).any()


def test_evaluation_masks_are_bit_identical_and_ignore_batch_size(task):
    ex = task.heldout(100)
    runs = []
    for bs in (7, 100):
        rows = [(full.ids, full.targets, one.ids) for _, full, one in task.iterate(ex, bs, seed=4)]
        runs.append([np.concatenate([np.pad(r[i], ((0, 0), (0, 30 - r[i].shape[1])))
                                     for r in rows]) for i in range(3)])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_training_batches_are_bit_identical_for_a_seed_and_differ_across_seeds(task):
    a, b = task.batch_iterator(16, seed=2), task.batch_iterator(16, seed=2)
    c = task.batch_iterator(16, seed=3)
    for _ in range(3):
        x, y, z = next(a), next(b), next(c)
        for f in ("ids", "targets", "clean", "lengths"):
            np.testing.assert_array_equal(getattr(x, f), getattr(y, f))
    assert not np.array_equal(x.ids, z.ids) or not np.array_equal(x.targets, z.targets)
