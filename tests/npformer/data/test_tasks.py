"""Synthetic tasks, vocabulary, batching and the held-out split (npformer.data.tasks)."""
import itertools

import numpy as np
import pytest

from npformer.data.tasks import (
    BOS,
    EOS,
    NUM_SPECIAL,
    PAD,
    ClassificationBatch,
    Seq2SeqBatch,
    Vocab,
    batch_iterator,
    collate,
    examples_from_text,
    iterate_examples,
    make_batches,
    make_task,
)


def _symbols(row):
    """Symbol ids of a wrapped row: drop BOS/PAD and stop at EOS (independent of Vocab.decode)."""
    out = []
    for t in row.tolist():
        if t == EOS:
            break
        if t >= NUM_SPECIAL:
            out.append(t)
    return out


# -- vocabulary ------------------------------------------------------------------------------------
def test_vocab_layout_and_round_trip():
    v = Vocab(5)
    assert v.tokens[:3] == ["<pad>", "<bos>", "<eos>"]
    assert (PAD, BOS, EOS) == (0, 1, 2)
    assert v.tokens[3:] == ["a", "b", "c", "d", "e"]
    assert v.size == len(v) == 8
    assert v.encode("cab") == [5, 3, 4]
    assert v.encode("c a b") == [5, 3, 4]
    assert v.decode([5, 3, 4, EOS, 6, PAD]) == "cab"          # stops at EOS
    assert v.decode([BOS, 5, 3, PAD]) == "ca"                  # drops BOS / PAD
    assert v.decode([BOS, 5, EOS], strip=False) == "<bos> c <eos>"
    assert v.decode_batch(np.array([[3, 4, EOS], [7, EOS, PAD]])) == ["ab", "e"]


def test_vocab_large_uses_word_tokens():
    v = Vocab(70)
    assert v.tokens[3] == "t0" and v.tokens[-1] == "t69"
    assert v.encode("t1 t69") == [4, 72]
    assert v.decode([4, 72, EOS]) == "t1 t69"


def test_vocab_errors_name_the_argument():
    with pytest.raises(ValueError, match="num_symbols"):
        Vocab(0)
    v = Vocab(3)
    with pytest.raises(ValueError, match=r"unknown symbols \['z'\]"):
        v.encode("abz")
    with pytest.raises(ValueError, match="unknown symbols"):
        v.encode("a <eos>")                                     # specials are not input symbols
    with pytest.raises(ValueError, match=r"ids: expected token ids in \[0, 6\)"):
        v.decode([1, 9])


# -- tasks -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,rule", [("copy", lambda s: s), ("reverse", lambda s: s[::-1]),
                                       ("sort", sorted)])
def test_seq2seq_batches_follow_the_rule(name, rule):
    task = make_task(name, num_symbols=7, min_len=2, max_len=9)
    for b in make_batches(task, batch_size=16, num_batches=3, seed=3):
        assert isinstance(b, Seq2SeqBatch)
        for arr in b[:3]:
            assert arr.dtype == np.int64
        B = b.src.shape[0]
        assert B == 16 and b.tgt_in.shape == b.tgt_out.shape
        for i in range(B):
            src = b.src[i]
            n = int(b.src_lengths[i])                            # symbols + EOS
            assert 3 <= n <= 10
            assert src[n - 1] == EOS and (src[n:] == PAD).all() and (src[: n - 1] >= 3).all()
            syms = list(src[: n - 1])
            want = list(rule(syms))
            m = int(b.tgt_lengths[i])
            assert list(b.tgt_out[i, : m - 1]) == want and b.tgt_out[i, m - 1] == EOS
            assert (b.tgt_out[i, m:] == PAD).all()
            # decoder input: BOS then the target, i.e. tgt_out shifted right by one
            assert b.tgt_in[i, 0] == BOS and list(b.tgt_in[i, 1:m]) == want
            assert (b.tgt_in[i, m:] == PAD).all()
        # trimmed to the longest row
        assert b.src.shape[1] == b.src_lengths.max() and b.tgt_out.shape[1] == b.tgt_lengths.max()


def test_lengths_cover_the_range():
    task = make_task("copy", num_symbols=4, min_len=3, max_len=5)
    ex = task.sample(np.random.default_rng(0), 3000)
    assert set(ex.src_len.tolist()) == {3, 4, 5}


def test_same_seed_same_batches_other_seed_other_batches():
    task = make_task("reverse", num_symbols=10, max_len=8)
    a = make_batches(task, 8, 4, seed=11)
    b = make_batches(task, 8, 4, seed=11)
    c = make_batches(task, 8, 4, seed=12)
    for x, y in zip(a, b):
        for u, w in zip(x, y):
            np.testing.assert_array_equal(u, w)
    assert any(x.src.shape != z.src.shape or not np.array_equal(x.src, z.src) for x, z in zip(a, c))
    it = batch_iterator(task, 8, seed=11)
    np.testing.assert_array_equal(next(it).src, a[0].src)


def test_heldout_split_never_overlaps_training():
    task = make_task("reverse", num_symbols=4, min_len=1, max_len=5, heldout_fraction=0.2)
    held = task.heldout(400)
    train = set()
    for b in make_batches(task, 64, 30, seed=0):
        for i in range(b.src.shape[0]):
            train.add(tuple(_symbols(b.src[i])))
    heldset = {tuple(r[:n].tolist()) for r, n in zip(held.src, held.src_len)}
    assert heldset and train
    assert not (heldset & train)
    # the partition covers the sequence space: about heldout_fraction of all length-5 sequences
    space = np.array(list(itertools.product(range(3, 7), repeat=5)))          # 1024 sequences
    frac = task.is_heldout(space).mean()
    assert 0.1 < frac < 0.3
    # the split depends on the task seed
    other = make_task("reverse", num_symbols=4, min_len=1, max_len=5, heldout_fraction=0.2, seed=1)
    assert not np.array_equal(task.is_heldout(space), other.is_heldout(space))


def test_pairs_is_a_fixed_table_learnable_only_by_memorising():
    task = make_task("pairs", num_symbols=6, min_len=2, max_len=6, num_pairs=12)
    assert task.memorise
    table = task.heldout(5)                                        # the whole table
    assert len(table) == 12
    keys = {tuple(r[:n]) for r, n in zip(table.src, table.src_len)}
    assert len(keys) == 12                                         # distinct sources
    lookup = {tuple(r[:n]): tuple(t[:m]) for r, n, t, m in
              zip(table.src, table.src_len, table.tgt, table.tgt_len)}
    for b in make_batches(task, 10, 3, seed=5):
        for i in range(10):
            assert tuple(_symbols(b.tgt_out[i])) == lookup[tuple(_symbols(b.src[i]))]
    # the target is not a function a rule could compute: not the copy of the source for most pairs
    assert sum(lookup[k] == k for k in lookup) < 3
    # the same seed gives the same table
    again = make_task("pairs", num_symbols=6, min_len=2, max_len=6, num_pairs=12).heldout(1)
    np.testing.assert_array_equal(again.src, table.src)


def test_pairs_too_many_for_the_space():
    with pytest.raises(ValueError, match="num_pairs"):
        make_task("pairs", num_symbols=2, min_len=1, max_len=2, num_pairs=50)


def test_majority_classification():
    task = make_task("majority", num_symbols=6, min_len=3, max_len=7)
    assert task.is_classification and task.num_classes == 2
    b = make_batches(task, 200, 1, seed=0)[0]
    assert isinstance(b, ClassificationBatch)
    assert (b.src[:, 0] == BOS).all()
    for i in range(200):
        syms = _symbols(b.src[i])
        assert len(syms) + 2 == b.lengths[i] and b.src[i, b.lengths[i] - 1] == EOS
        upper = sum(s >= 3 + 3 for s in syms)
        assert b.labels[i] == int(upper * 2 > len(syms))
    assert 0.25 < b.labels.mean() < 0.75                           # both classes present


def test_iterate_examples_keeps_order_and_covers_all():
    task = make_task("copy", num_symbols=5, max_len=4)
    ex = task.heldout(23)
    batches = list(iterate_examples(ex, 10))
    assert [b.src.shape[0] for b in batches] == [10, 10, 3]
    got = [tuple(_symbols(r)) for b in batches for r in b.src]
    assert got == [tuple(r[:n]) for r, n in zip(ex.src, ex.src_len)]


def test_examples_from_text():
    task = make_task("sort", num_symbols=5, max_len=6)
    b = collate(examples_from_text(task, ["ecab", "a"]))
    assert task.vocab.decode_batch(b.src) == ["ecab", "a"]
    assert task.vocab.decode_batch(b.tgt_out) == ["abce", "a"]
    with pytest.raises(ValueError, match="max_len"):
        examples_from_text(task, ["abcdeab"])
    with pytest.raises(ValueError, match="unknown symbols"):
        examples_from_text(task, ["xyz"])


@pytest.mark.parametrize("kwargs,match", [
    (dict(name="rot13"), "task: expected one of"),
    (dict(min_len=5, max_len=3), "min_len"),
    (dict(max_len=0), "max_len"),
    (dict(heldout_fraction=1.5), "heldout_fraction"),
    (dict(num_symbols=0), "num_symbols"),
])
def test_task_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        name = kwargs.pop("name", "reverse")
        make_task(name, **kwargs)


def test_bad_batching_arguments():
    task = make_task("copy")
    with pytest.raises(ValueError, match="batch_size"):
        make_batches(task, 0, 1)
    with pytest.raises(ValueError, match="split"):
        task.sample(np.random.default_rng(0), 3, split="test")
