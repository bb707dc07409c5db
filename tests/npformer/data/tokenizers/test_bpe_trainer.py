"""The byte-level BPE trainer and encoder, against a naive reference written here.

The reference trains the slow, obvious way: at every merge it recounts every adjacent pair over
every occurrence of every piece of the corpus, takes the highest count (ties: the smallest pair),
and rewrites every occurrence. It encodes by applying the learned merges one after the other, in
the order they were learned. The trainer under test must learn the same merges with the same
counts, and encode every text the same way; every text must decode back exactly. Planted bugs (a
merge applied out of rank order; a pair count off by one) must be caught by the same checks.
"""
from __future__ import annotations

import json
from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npformer.data.tokenizers import BPETokenizer, bpe, gpt2_pieces

from .corpora import mixed_corpus
from .text_strategies import text_settings, texts

BYTE0, FIRST_MERGE = 3, 259            # the documented ids: 3 specials, then 256 bytes, then merges


def naive_merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if ids[i:i + 2] == list(pair):
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def naive_learn(text, num_merges, min_count=2):
    """Merges and their counts, recounting the whole corpus at every merge."""
    words = [[BYTE0 + b for b in piece.encode("utf-8")] for piece in gpt2_pieces(text)]
    merges, counts = [], []
    for k in range(num_merges):
        count = Counter()
        for w in words:
            for i in range(len(w) - 1):
                count[(w[i], w[i + 1])] += 1
        if not count:
            break
        best = max(count, key=lambda p: (count[p], -p[0], -p[1]))
        if count[best] < min_count:
            break
        merges.append(best)
        counts.append(count[best])
        words = [naive_merge(w, best, FIRST_MERGE + k) for w in words]
    return merges, counts


def naive_encode(merges, text):
    ids = []
    for piece in gpt2_pieces(text):
        piece_ids = [BYTE0 + b for b in piece.encode("utf-8")]
        for k, pair in enumerate(merges):
            piece_ids = naive_merge(piece_ids, pair, FIRST_MERGE + k)
        ids.extend(piece_ids)
    return ids


def check_trainer(text, num_merges, min_count=2):
    merges, counts = bpe.learn_merges(Counter(gpt2_pieces(text)), num_merges, min_count)
    assert (merges, counts) == naive_learn(text, num_merges, min_count)


def check_encoder(tok, text):
    assert tok.encode(text) == naive_encode(tok.merges, text), f"encode differs on {text!r}"
    assert tok.decode(tok.encode(text)) == text


SMALL = mixed_corpus(n_lines=60, seed=3)
OTHER_TEXTS = [mixed_corpus(n_lines=5, seed=s) for s in range(4)] + ["aaaaaaa bbbb", "the theme thereof"]


def test_reference_on_a_mixed_corpus():
    check_trainer(SMALL, 150)
    tok = BPETokenizer.train(SMALL, FIRST_MERGE + 150)
    assert tok.vocab_size == FIRST_MERGE + 150
    for text in [SMALL] + OTHER_TEXTS:
        check_encoder(tok, text)
    assert len(tok.encode(SMALL)) < 0.5 * len(SMALL.encode("utf-8"))       # it does compress


def test_tie_goes_to_the_smallest_pair():
    # "xy" and " ab" occur twice each: (x,y), (" ",a) and (a,b) tie at 2; " " is byte 32, id 35,
    # the smallest first id, so (35, 3 + ord("a")) is merged first
    merges, counts = bpe.learn_merges(Counter(gpt2_pieces("xy ab xy ab")), 1)
    assert merges == [(35, 3 + ord("a"))] and counts == [2]


def test_repeated_symbol_merges_left_to_right():
    # "aaa": (a,a) counts 2 (overlapping), merging left to right leaves "aa" "a"
    tok = BPETokenizer.train("aaa", FIRST_MERGE + 1, min_count=1)
    a = BYTE0 + ord("a")
    assert tok.merges == [(a, a)] and tok.encode("aaa") == [FIRST_MERGE, a]


def test_training_stops_when_no_pair_is_frequent_enough():
    tok = BPETokenizer.train("abc", 1000)                 # every pair occurs once, below min_count=2
    assert tok.merges == [] and tok.vocab_size == FIRST_MERGE


# a tiny alphabet makes repeated pairs, overlaps ("aaaa") and ties common
repetitive = st.text(st.sampled_from("aab \n'é"), max_size=80)


@text_settings()
@given(st.one_of(texts, repetitive), st.integers(0, 40), st.sampled_from([1, 2, 3]))
def test_trainer_matches_the_naive_reference(corpus, num_merges, min_count):
    check_trainer(corpus, num_merges, min_count)


@text_settings()
@given(st.one_of(st.lists(texts, min_size=1, max_size=3).map("\n".join), repetitive), texts)
def test_every_text_round_trips_and_encodes_as_the_reference(corpus, other):
    tok = BPETokenizer.train(corpus, FIRST_MERGE + 60, min_count=1)
    for text in (corpus, other, corpus + other):
        check_encoder(tok, text)
    restored = BPETokenizer.from_dict(json.loads(json.dumps(tok.to_dict())))
    assert restored.merges == tok.merges and restored.encode(other) == tok.encode(other)


def test_special_tokens_and_bos_eos():
    tok = BPETokenizer.train(SMALL, FIRST_MERGE + 20)
    ids = tok.encode("the fox", add_bos=True, add_eos=True)
    assert ids[0] == bpe.BOS == 1 and ids[-1] == bpe.EOS == 2
    assert tok.decode(ids) == "the fox" and tok.decode([bpe.PAD] + ids) == "the fox"
    assert tok.decode([BYTE0 + 0xC3]) == "\ufffd"         # half a character: replaced, no error


# ---- planted bugs: the checks above must catch each of them ----

def _caught(check) -> bool:
    try:
        check()
    except AssertionError:
        return True
    return False


def test_planted_bug_merge_out_of_rank_order_is_caught():
    class LatestMergeFirst(BPETokenizer):
        def encode_piece(self, piece):                   # the planted bug: highest rank first
            ids = bpe.piece_bytes(piece)
            while True:
                pairs = [p for p in pairwise(ids) if p in self.ranks]
                if not pairs:
                    return ids
                pair = max(pairs, key=self.ranks.get)
                ids = bpe.merge_pair(ids, pair, FIRST_MERGE + self.ranks[pair])

    good = BPETokenizer.train(SMALL, FIRST_MERGE + 150)
    bad = LatestMergeFirst(good.merges)
    assert not any(_caught(lambda t=t: check_encoder(good, t)) for t in OTHER_TEXTS)
    assert any(_caught(lambda t=t: check_encoder(bad, t)) for t in OTHER_TEXTS)


def test_planted_bug_pair_count_off_by_one_is_caught(monkeypatch):
    assert not _caught(lambda: check_trainer(SMALL, 150))

    def last_pair_missed(ids, weight, counts):             # the planted bug: range one short
        for i in range(len(ids) - 2):
            counts[(ids[i], ids[i + 1])] += weight

    monkeypatch.setattr(bpe, "count_pairs", last_pair_missed)
    assert _caught(lambda: check_trainer(SMALL, 150))


def test_planted_bug_pair_count_one_too_many_is_caught(monkeypatch):
    real = bpe.count_pairs

    def one_too_many(ids, weight, counts):                # the planted bug: +1 on a word's first pair
        real(ids, weight, counts)
        if len(ids) > 1 and weight > 0:
            counts[(ids[0], ids[1])] += 1

    monkeypatch.setattr(bpe, "count_pairs", one_too_many)
    assert _caught(lambda: check_trainer(SMALL, 150))


@pytest.mark.parametrize("vocab_size", [258, 0, "300", 300.0])
def test_vocab_size_below_the_bytes_is_refused(vocab_size):
    with pytest.raises(ValueError, match="vocab_size: expected an int >= 259"):
        BPETokenizer.train("abc", vocab_size)
