"""Synthetic tasks a small Transformer can really learn, with reproducible padded batches.

Token ids: PAD=0, BOS=1, EOS=2, then the task's symbols (ids 3, 4, ...). Symbols print as single
characters (a..z, A..Z, 0..9) when there are at most 62 of them, else as space-separated "t<k>".

Seq2seq tasks (for `Transformer`), a source of `min_len..max_len` symbols:

  copy     target = source                      "abc"  -> "abc"
  reverse  target = source reversed             "abc"  -> "cba"
  sort     target = source sorted by id         "cab"  -> "abc"
  pairs    the tutorials' dummy translation data: a fixed table of `num_pairs` random source
           sequences, each paired with an unrelated random target. Nothing links the two, so it is
           learnable only by memorising; its evaluation set IS the table (there is no held-out).

Classification task (for `EncoderClassifier`, 2 classes):

  majority class 1 when more than half of the symbols come from the upper half of the alphabet
           (ids >= 3 + num_symbols // 2), else 0. One attention layer that pools over the sequence
           solves it; the classes are close to balanced for odd lengths.

Batches (all int64, padded with PAD):

  Seq2SeqBatch.src      (B, S)  symbols + EOS           "abc" -> a b c EOS
  Seq2SeqBatch.tgt_in   (B, T)  BOS + target            decoder input (teacher forcing, shifted right)
  Seq2SeqBatch.tgt_out  (B, T)  target + EOS            what the decoder must predict at each position
  ClassificationBatch.src (B, S) BOS + symbols + EOS    (BOS is the "first" token a classifier pools)

Held-out split: every sequence space is partitioned once by a seeded hash of the source tokens;
`heldout_fraction` of it (in every length) belongs to evaluation. Training batches never contain a
held-out source and evaluation examples are only held-out sources, so the accuracy measured on them is
generalisation, not recall. The same seed always gives the same partition and the same batches.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, NamedTuple, Sequence

import numpy as np

from npformer.data.vocab import BOS, EOS, NUM_SPECIAL, PAD, SPECIALS, Vocab  # noqa: F401 (re-exported)
from npformer.guards.rules import check_examples_fit_memory, check_generator, check_texts, is_real

SEQ2SEQ_TASKS = ("copy", "reverse", "sort", "pairs")
CLASSIFICATION_TASKS = ("majority",)
TASKS = SEQ2SEQ_TASKS + CLASSIFICATION_TASKS
_HASH_PRIME = 2_147_483_647  # 2**31 - 1: keys stay far inside int64 for any max_len used here


# ---------------------------------------------------------------------------------------------------
# examples and batches
# ---------------------------------------------------------------------------------------------------
class Examples(NamedTuple):
    """Raw examples before batching: symbol ids only (no BOS/EOS), right-padded with PAD.

    src (N, Ls) int64, src_len (N,), tgt (N, Lt) int64 or None, tgt_len (N,) or None,
    labels (N,) int64 or None (classification).
    """
    src: np.ndarray
    src_len: np.ndarray
    tgt: np.ndarray | None
    tgt_len: np.ndarray | None
    labels: np.ndarray | None

    def __len__(self) -> int:
        return int(self.src.shape[0])

    def take(self, idx: np.ndarray) -> "Examples":
        """The examples at the given indices (in that order)."""
        pick = lambda a: None if a is None else a[idx]  # noqa: E731
        return Examples(self.src[idx], self.src_len[idx], pick(self.tgt), pick(self.tgt_len),
                        pick(self.labels))


class Seq2SeqBatch(NamedTuple):
    """src (B,S) symbols+EOS; tgt_in (B,T) BOS+target; tgt_out (B,T) target+EOS; lengths (B,) count
    the non-PAD tokens of src and of tgt_out (EOS included). All int64, PAD-padded."""
    src: np.ndarray
    tgt_in: np.ndarray
    tgt_out: np.ndarray
    src_lengths: np.ndarray
    tgt_lengths: np.ndarray

    @property
    def num_tokens(self) -> int:
        """Target tokens the loss counts (non-PAD entries of tgt_out)."""
        return int(self.tgt_lengths.sum())


class ClassificationBatch(NamedTuple):
    """src (B,S) BOS+symbols+EOS, PAD-padded; labels (B,); lengths (B,) non-PAD tokens of src."""
    src: np.ndarray
    labels: np.ndarray
    lengths: np.ndarray

    @property
    def num_tokens(self) -> int:
        return int(self.lengths.sum())


def _wrap(seq: np.ndarray, lengths: np.ndarray, *, bos: bool, eos: bool) -> np.ndarray:
    """Right-padded symbol rows (N, L) -> rows with BOS in front and/or EOS after the last symbol,
    trimmed to the longest row in the batch."""
    n = seq.shape[0]                                                   # N
    width = int(lengths.max(initial=0)) + int(bos) + int(eos)          # longest wrapped row
    out = np.full((n, width), PAD, dtype=np.int64)                     # (N, W)
    shift = int(bos)
    body = min(seq.shape[1], width - shift)
    out[:, shift:shift + body] = seq[:, :body]                         # symbols (PAD after them)
    if bos:
        out[:, 0] = BOS                                                # (N,)
    if eos:
        out[np.arange(n), lengths + shift] = EOS                       # EOS right after the symbols
    return out


def collate(examples: Examples) -> Seq2SeqBatch | ClassificationBatch:
    """Pad and wrap raw examples into a batch (vectorised, no loop over examples)."""
    if hasattr(examples, "collate"):                  # token-level tasks' examples batch themselves
        return examples.collate()
    if len(examples) == 0:
        raise ValueError("examples: expected at least one example, got 0")
    if examples.labels is not None:
        src = _wrap(examples.src, examples.src_len, bos=True, eos=True)  # (B, S)
        return ClassificationBatch(src, examples.labels.astype(np.int64),
                                   (examples.src_len + 2).astype(np.int64))
    src = _wrap(examples.src, examples.src_len, bos=False, eos=True)     # (B, S)  symbols + EOS
    tgt_in = _wrap(examples.tgt, examples.tgt_len, bos=True, eos=False)  # (B, T)  BOS + target
    tgt_out = _wrap(examples.tgt, examples.tgt_len, bos=False, eos=True)  # (B, T) target + EOS
    return Seq2SeqBatch(src, tgt_in, tgt_out, (examples.src_len + 1).astype(np.int64),
                        (examples.tgt_len + 1).astype(np.int64))


# ---------------------------------------------------------------------------------------------------
# tasks
# ---------------------------------------------------------------------------------------------------
def _check_int(name: str, v, lo: int) -> int:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < lo:
        raise ValueError(f"{name}: expected an int >= {lo}, got {v!r}")
    return int(v)


@dataclass(frozen=True)
class Task:
    """A synthetic task: what to sample, how targets follow from sources, and the held-out split.

    name              one of TASKS
    num_symbols       alphabet size (the vocabulary adds PAD, BOS, EOS)
    min_len, max_len  source length range (inclusive), drawn uniformly
    seed              fixes the held-out partition and, for "pairs", the pair table
    heldout_fraction  share of every length's sequence space reserved for evaluation
    num_pairs         size of the "pairs" table
    """

    name: str = "reverse"
    num_symbols: int = 10
    min_len: int = 1
    max_len: int = 10
    seed: int = 0
    heldout_fraction: float = 0.1
    num_pairs: int = 200

    def __post_init__(self) -> None:
        if self.name not in TASKS:
            raise ValueError(f"task: expected one of {TASKS}, got {self.name!r}")
        for name, lo in (("num_symbols", 1), ("min_len", 1), ("max_len", 1), ("seed", 0),
                         ("num_pairs", 1)):              # kept as Python ints (NumPy's converted)
            object.__setattr__(self, name, _check_int(name, getattr(self, name), lo))
        if self.min_len > self.max_len:
            raise ValueError(f"min_len: expected <= max_len={self.max_len}, got {self.min_len}")
        f = self.heldout_fraction
        if not is_real(f) or not 0.0 < f < 1.0:
            raise ValueError(f"heldout_fraction: expected a float in (0, 1), got {f!r}")
        object.__setattr__(self, "heldout_fraction", float(f))
        if self.name == "majority" and self.num_symbols < 2:
            raise ValueError(f"num_symbols: expected >= 2 for the majority task, got "
                             f"{self.num_symbols}")
        # the pair table and the hash coefficients are derived once from the seed
        hash_rng = np.random.default_rng([self.seed, 0x5EED])
        object.__setattr__(self, "_coef", hash_rng.integers(1, _HASH_PRIME, size=self.max_len))
        if self.name == "pairs":
            object.__setattr__(self, "_table", self._make_table())

    # -- description ------------------------------------------------------------------------------
    @property
    def vocab(self) -> Vocab:
        return Vocab(self.num_symbols)

    @property
    def vocab_size(self) -> int:
        return self.num_symbols + NUM_SPECIAL

    @property
    def is_classification(self) -> bool:
        return self.name in CLASSIFICATION_TASKS

    @property
    def memorise(self) -> bool:
        """True for "pairs": learnable only by memorising; evaluation uses the training table."""
        return self.name == "pairs"

    @property
    def num_classes(self) -> int:
        return 2

    @property
    def max_src_tokens(self) -> int:
        """Longest source row a batch can hold (BOS/EOS included)."""
        return self.max_len + (2 if self.is_classification else 1)

    @property
    def max_tgt_tokens(self) -> int:
        """Longest tgt_in / tgt_out row a batch can hold (BOS or EOS included)."""
        return self.max_len + 1

    # -- targets ----------------------------------------------------------------------------------
    def targets(self, src: np.ndarray, src_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Targets of right-padded sources (N, L) for copy / reverse / sort (vectorised)."""
        n, width = src.shape                                             # N, L
        pos = np.arange(width)[None, :]                                  # (1, L)
        keep = pos < src_len[:, None]                                    # (N, L) real symbols
        if self.name == "copy":
            return src.copy(), src_len.copy()
        if self.name == "reverse":
            idx = np.where(keep, src_len[:, None] - 1 - pos, 0)          # (N, L) mirrored index
            out = np.take_along_axis(src, idx, axis=1)                   # (N, L)
            return np.where(keep, out, PAD), src_len.copy()
        if self.name == "sort":
            big = np.iinfo(np.int64).max
            out = np.sort(np.where(keep, src, big), axis=1)              # (N, L) PAD slots last
            return np.where(keep, out, PAD), src_len.copy()
        raise ValueError(f"task {self.name!r} has no rule-based targets")

    def labels(self, src: np.ndarray, src_len: np.ndarray) -> np.ndarray:
        """Class of each source for the classification task (majority of upper-half symbols)."""
        upper = src >= NUM_SPECIAL + self.num_symbols // 2               # (N, L) (PAD is never upper)
        return (2 * upper.sum(axis=1) > src_len).astype(np.int64)        # (N,)

    # -- held-out partition -----------------------------------------------------------------------
    def is_heldout(self, src: np.ndarray) -> np.ndarray:
        """(N,) bool: which right-padded sources (N, L<=max_len) belong to the evaluation split."""
        src = np.asarray(src, dtype=np.int64)
        coef = self._coef[: src.shape[1]]                                # (L,)
        key = (src % _HASH_PRIME * coef[None, :]) % _HASH_PRIME          # (N, L) per-token terms
        key = key.sum(axis=1) % _HASH_PRIME                              # (N,) linear hash
        key = (key * 0x9E3779B1) % (1 << 32)                             # spread the low bits
        bucket = (key >> 8) % 10_000                                     # (N,) in [0, 10000)
        return bucket < int(round(self.heldout_fraction * 10_000))

    # -- sampling ---------------------------------------------------------------------------------
    def _random_sources(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        lengths = rng.integers(self.min_len, self.max_len + 1, size=n)               # (n,)
        sym = rng.integers(NUM_SPECIAL, NUM_SPECIAL + self.num_symbols,
                           size=(n, self.max_len))                                  # (n, L)
        keep = np.arange(self.max_len)[None, :] < lengths[:, None]                   # (n, L)
        return np.where(keep, sym, PAD).astype(np.int64), lengths.astype(np.int64)

    def _make_table(self) -> Examples:
        """The fixed "pairs" table: distinct random sources, each with an unrelated random target.

        Rounds of `num_pairs` random sources; each round keeps, in order, the rows not seen before
        (vectorised: first occurrences among the rows kept so far and the round's)."""
        space = 0                                        # distinct sources, counted up to need
        for n in range(self.min_len, self.max_len + 1):
            space += self.num_symbols ** n
            if space >= self.num_pairs:
                break
        too_few = ValueError(f"num_pairs: the space of sources with {self.num_symbols} symbols and "
                             f"lengths {self.min_len}..{self.max_len} has fewer than "
                             f"{self.num_pairs} distinct sequences")
        if space < self.num_pairs:                       # refused at once, not after 100 rounds
            raise too_few
        rng = np.random.default_rng([self.seed, 0xDA7A])
        rows = np.zeros((0, self.max_len), np.int64)                                  # (k, L)
        lens = np.zeros(0, np.int64)                                                  # (k,)
        for _ in range(100):
            src, ln = self._random_sources(rng, self.num_pairs)                       # (n, L), (n,)
            both = np.ascontiguousarray(np.concatenate([rows, src]))                  # (k+n, L)
            keys = both.view(np.dtype((np.void, both.dtype.itemsize * self.max_len)))[:, 0]
            _, first = np.unique(keys, return_index=True)                             # first rows
            new = np.sort(first[first >= len(rows)]) - len(rows)                      # round's new
            new = new[:self.num_pairs - len(rows)]
            rows, lens = np.concatenate([rows, src[new]]), np.concatenate([lens, ln[new]])
            if len(rows) == self.num_pairs:
                break
        else:
            raise too_few
        src, src_len = rows, lens
        tgt, tgt_len = self._random_sources(rng, self.num_pairs)
        return Examples(src, src_len, tgt, tgt_len, None)

    def _finish(self, src: np.ndarray, src_len: np.ndarray) -> Examples:
        if self.is_classification:
            return Examples(src, src_len, None, None, self.labels(src, src_len))
        tgt, tgt_len = self.targets(src, src_len)
        return Examples(src, src_len, tgt, tgt_len, None)

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> Examples:
        """`n` random examples from one side of the partition ("train" or "heldout").

        Sources on the wrong side are redrawn (vectorised rejection). "pairs" draws rows of its
        table for either split (the table is both the training and the evaluation set).
        """
        n = _check_int("n", n, 1)
        check_generator(rng)
        if split not in ("train", "heldout"):
            raise ValueError(f"split: expected 'train' or 'heldout', got {split!r}")
        L = self.max_len + 1                                 # a row and its length, int64
        check_examples_fit_memory("n", n, 8 * (L + (1 if self.is_classification else L)),
                                  f"its source{'' if self.is_classification else ' and target'} "
                                  f"ids and lengths (max_len={self.max_len}, int64)")
        if self.memorise:
            return self._table.take(rng.integers(0, self.num_pairs, size=n))
        src, src_len = self._random_sources(rng, n)                      # (n, L), (n,)
        want = split == "heldout"
        for _ in range(1000):
            bad = self.is_heldout(src) != want                           # (n,)
            if not bad.any():
                return self._finish(src, src_len)
            new_src, new_len = self._random_sources(rng, int(bad.sum()))
            src[bad], src_len[bad] = new_src, new_len
        raise ValueError(f"task {self.name!r}: could not draw {split} sources (the partition of "
                         f"{self.num_symbols} symbols, lengths {self.min_len}..{self.max_len}, "
                         f"heldout_fraction={self.heldout_fraction} leaves that side almost empty)")

    def heldout(self, n: int, seed: int | None = None) -> Examples:
        """A fixed evaluation set: `n` held-out examples (the table itself for "pairs")."""
        if self.memorise:
            return self._table
        rng = np.random.default_rng([self.seed if seed is None else seed, 0xE7A1])
        return self.sample(rng, n, split="heldout")

    def describe(self) -> str:
        ex = self.vocab.symbols[: min(4, self.num_symbols)]
        return (f"task={self.name} symbols={self.num_symbols} ({''.join(ex)}...) "
                f"lengths={self.min_len}..{self.max_len} vocab_size={self.vocab_size}")


def make_task(name: str = "reverse", **kwargs) -> Task:
    """`Task(name, **kwargs)`, validated (see Task for the fields)."""
    return Task(name=name, **kwargs)


# ---------------------------------------------------------------------------------------------------
# batching
# ---------------------------------------------------------------------------------------------------
def batch_iterator(task: Task, batch_size: int, seed: int = 0,
                   split: str = "train") -> Iterator[Seq2SeqBatch | ClassificationBatch]:
    """An endless stream of training batches; the same seed gives the same stream. A task with a
    batch_iterator of its own (the synthetic language-model tasks, npformer.data.lm_data) makes its
    own batches; every other one (text tasks too) is sampled and collated here."""
    if callable(getattr(task, "batch_iterator", None)):
        yield from task.batch_iterator(batch_size, seed, split)
        return
    batch_size = _check_int("batch_size", batch_size, 1)
    rng = np.random.default_rng([seed, 0xBA7C])
    while True:
        yield collate(task.sample(rng, batch_size, split=split))


def make_batches(task: Task, batch_size: int, num_batches: int, seed: int = 0,
                 split: str = "train") -> list[Seq2SeqBatch | ClassificationBatch]:
    """The first `num_batches` batches of `batch_iterator(task, batch_size, seed, split)`."""
    num_batches = _check_int("num_batches", num_batches, 0)
    it = batch_iterator(task, batch_size, seed, split)
    return [next(it) for _ in range(num_batches)]


def iterate_examples(examples: Examples,
                     batch_size: int) -> Iterator[Seq2SeqBatch | ClassificationBatch]:
    """Batches over a fixed set of examples, in order (evaluation)."""
    batch_size = _check_int("batch_size", batch_size, 1)
    for start in range(0, len(examples), batch_size):
        yield collate(examples.take(np.arange(start, min(start + batch_size, len(examples)))))


def examples_from_text(task: Task, texts: Sequence[str]) -> Examples:
    """Examples for user-given source strings (targets from the task's rule where it has one)."""
    texts = check_texts(texts)
    if getattr(task, "is_lm", False) or getattr(task, "is_text", False):  # "12+7=", your text
        return task.examples_from_text(texts)
    vocab = task.vocab
    ids = [vocab.encode(t, name=f"input {t!r}") for t in texts]
    for t, row in zip(texts, ids):
        if not 1 <= len(row) <= task.max_len:
            raise ValueError(f"input {t!r}: expected 1..{task.max_len} symbols (the task's max_len), "
                             f"got {len(row)}")
    src = np.full((len(ids), task.max_len), PAD, dtype=np.int64)          # (N, L)
    for i, row in enumerate(ids):
        src[i, : len(row)] = row
    src_len = np.asarray([len(r) for r in ids], dtype=np.int64)           # (N,)
    if task.memorise:
        return Examples(src, src_len, np.zeros_like(src), np.zeros_like(src_len), None)
    return task._finish(src, src_len)
