"""Invariants of the language-model data: addition lines (npformer.data.lm_data) and text
windows (npformer.data.text_lm): targets are the inputs shifted by one, every window lies inside
its side of the corpus and the extreme offsets are reachable, answers are what the line says."""
import numpy as np

from npformer.data.lm_data import ArithmeticTask, collate_lm
from npformer.data.text_lm import build_text_task
from npformer.data.vocab import BOS, EOS, PAD


def test_addition_rows_targets_are_the_ids_shifted_and_answers_are_sums():
    t = ArithmeticTask(max_number=50, seed=1)
    ex = t.sample(np.random.default_rng(0), 500)
    b = collate_lm(ex)
    v = t.vocab
    for i in range(len(ex)):
        n = int(b.lengths[i])
        assert b.ids[i, 0] == BOS and (b.ids[i, n:] == PAD).all()
        assert (b.targets[i, : n - 1] == b.ids[i, 1:n]).all()         # shifted by one
        assert b.targets[i, n - 1] == EOS and (b.targets[i, n:] == PAD).all()
        line = v.decode(b.ids[i, 1:n])
        lhs, answer = line.split("=")
        a, c = lhs.split("+")
        assert (int(a), int(c), int(answer)) == (ex.a[i], ex.b[i], ex.a[i] + ex.b[i])
        # the answer mask covers the answer's digits and EOS, nothing of the prompt
        mask = b.answer_mask[i]
        assert mask.sum() == len(answer) + 1
        assert v.decode(b.targets[i][mask][:-1]) == answer
    assert ex.a.min() == 0 and ex.a.max() == 49                        # both ends of [0, 50)


def test_heldout_pairs_never_appear_in_training(tmp_path):
    t = ArithmeticTask(max_number=20, seed=3)
    train = t.sample(np.random.default_rng(1), 5000)
    held = t.heldout(1000)
    tr = set(zip(train.a.tolist(), train.b.tolist()))
    he = set(zip(held.a.tolist(), held.b.tolist()))
    assert tr and he and not tr & he


def _text_task(tmp_path, context=8):
    f = tmp_path / "corpus.txt"
    f.write_text("".join(chr(ord("a") + i % 26) for i in range(400)))   # a..z repeated
    return build_text_task([str(f)], context=context, val_fraction=0.25)


def test_text_windows_are_slices_of_their_side_and_reach_both_ends(tmp_path):
    t = _text_task(tmp_path)
    tr, va = t.arrays()
    C = t.context
    w = t.sample(np.random.default_rng(0), 20000)
    assert w.starts.min() == 0 and w.starts.max() == len(tr) - C - 1    # the last token is used
    b = w.collate()
    assert b.ids.shape == b.targets.shape == (20000, C)
    np.testing.assert_array_equal(b.targets[:, :-1], b.ids[:, 1:])
    cols = w.starts[:, None] + np.arange(C)[None, :]
    np.testing.assert_array_equal(b.ids, tr[cols])
    np.testing.assert_array_equal(b.targets[:, -1], tr[w.starts + C])
    h = t.sample(np.random.default_rng(0), 5000, split="heldout")
    assert h.source is va and h.starts.max() == len(va) - C - 1


def test_heldout_windows_tile_the_validation_side_without_overlap(tmp_path):
    t = _text_task(tmp_path)
    va = t.arrays()[1]
    C = t.context
    h = t.heldout()
    assert h.starts.tolist() == list(range(0, len(va) - C, C))
    b = h.collate()
    scored = np.concatenate(list(b.targets))                     # each target once, in order
    np.testing.assert_array_equal(scored, va[1: 1 + len(scored)])
    assert len(va) - 1 - len(scored) < C                          # at most one window's tail left
