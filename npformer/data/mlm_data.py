"""A synthetic corpus for masked language modelling (BERT-style), checked exactly: mirror sentences.

Task "mlm" (for `BertForMaskedLM`). The sentences are the language of the small grammar

    S -> x S x   (x one of `num_symbols` letters a, b, c, ...)   |   #

with 2 * L + 1 symbols, L in [min_len, max_len]: "abc#cba". Every letter is determined by its mirror
image across "#", which may lie to its left or to its right: the model must read both directions.

    ids      (B, T)  [CLS]=BOS  sentence  [SEP]=EOS, PAD-padded; selected positions corrupted
    targets  (B, T)  the original token at the selected positions, PAD (ignored) everywhere else

Masking (BERT's rule, Devlin et al. 2019): each symbol position (never BOS/EOS/PAD) is selected with
probability `mask_prob` (0.15); a row with none selected gets one, so every row is scored. Of the
selected positions 80% become [MASK] ("_"), 10% a random symbol (a letter or "#"), 10% stay
unchanged. The loss is the cross-entropy on the selected positions only.

Evaluation (held-out halves w, never in training, as in the seq2seq tasks):
    loss, token_accuracy  on the selected positions of held-out sentences masked by the same rule
                          with a fixed seed. Not every one is recoverable: when the mirror of a
                          selected letter is itself masked its identity is gone (about 12% of them),
                          so the ceiling is roughly 90%, not 100%.
    sequence_accuracy     single-mask accuracy: one letter of each held-out sentence replaced by
                          [MASK], everything else intact; always recoverable (ceiling 100%).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, NamedTuple, Sequence

import numpy as np

from npformer.data.lm_data import CharVocab
from npformer.data.tasks import Task
from npformer.data.vocab import BOS, EOS, NUM_SPECIAL, PAD
from npformer.guards.rules import check_texts, is_int, is_real

__all__ = ["MirrorTask", "MLMExamples", "MLMBatch", "mask_tokens", "collate_mlm"]

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


class MLMExamples(NamedTuple):
    """Sentence halves w (N, L) (symbol ids, PAD after w_len) and w_len (N,)."""
    w: np.ndarray
    w_len: np.ndarray

    def __len__(self) -> int:
        return int(self.w.shape[0])

    def take(self, idx: np.ndarray) -> "MLMExamples":
        return MLMExamples(self.w[idx], self.w_len[idx])


class MLMBatch(NamedTuple):
    """ids (B, T) corrupted input; targets (B, T) original ids at the selected positions, PAD
    elsewhere; clean (B, T) the uncorrupted rows; lengths (B,) non-PAD tokens. All int64."""
    ids: np.ndarray
    targets: np.ndarray
    clean: np.ndarray
    lengths: np.ndarray

    @property
    def num_tokens(self) -> int:
        """Selected (scored) positions."""
        return int((self.targets != PAD).sum())

    @property
    def answer_mask(self) -> np.ndarray:
        """(B, T) bool: the scored positions."""
        return self.targets != PAD


def sentences(ex: MLMExamples) -> tuple[np.ndarray, np.ndarray]:
    """Clean rows BOS w # reverse(w) EOS (N, 2L + 3) PAD-padded, and their lengths (N,)."""
    w, n = ex.w, ex.w_len                                               # (N, L), (N,)
    N, L = w.shape
    width = 2 * int(n.max(initial=0)) + 3
    out = np.full((N, width), PAD, dtype=np.int64)                      # (N, W)
    j = np.arange(width)[None, :]                                       # (1, W)
    first = (j >= 1) & (j <= n[:, None])                                # (N, W) w's slots
    mirror = (j >= n[:, None] + 2) & (j <= 2 * n[:, None] + 1)          # (N, W) reversed w
    src_first = np.clip(j - 1, 0, L - 1)                                # (1, W) index into w
    src_mirror = np.clip(2 * n[:, None] + 1 - j, 0, L - 1)              # (N, W)
    out = np.where(first, np.take_along_axis(w, np.broadcast_to(src_first, (N, width)), 1), out)
    out = np.where(mirror, np.take_along_axis(w, src_mirror, 1), out)
    out[:, 0] = BOS
    out[np.arange(N), n + 1] = _HASH_PLACEHOLDER                        # centre marker (fixed below)
    out[np.arange(N), 2 * n + 2] = EOS
    return out, 2 * n + 3


_HASH_PLACEHOLDER = -1


def mask_tokens(clean: np.ndarray, rng: np.random.Generator, mask_prob: float, mask_id: int,
                word_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BERT's 80/10/10 corruption of clean rows (N, T): (ids, targets), vectorised.

    Eligible: ids in `word_ids`. Selected: eligible and u < mask_prob (one forced per row with none).
    Selected -> [MASK] with probability 0.8, a random word id 0.1, unchanged 0.1."""
    N, T = clean.shape
    eligible = np.isin(clean, word_ids)                                 # (N, T)
    selected = eligible & (rng.random((N, T)) < mask_prob)              # (N, T)
    none = ~selected.any(axis=1) & eligible.any(axis=1)                 # (N,) rows to force
    score = np.where(eligible, rng.random((N, T)), -1.0)                # (N, T) a random eligible
    forced = np.zeros_like(selected)
    forced[np.arange(N), score.argmax(axis=1)] = True
    selected |= forced & none[:, None]
    r = rng.random((N, T))                                              # (N, T) which corruption
    random_word = word_ids[rng.integers(0, len(word_ids), size=(N, T))]  # (N, T)
    ids = np.where(selected & (r < 0.8), mask_id, clean)                # 80%: [MASK]
    ids = np.where(selected & (r >= 0.8) & (r < 0.9), random_word, ids)  # 10%: random; 10%: kept
    targets = np.where(selected, clean, PAD)                            # (N, T)
    return ids.astype(np.int64), targets.astype(np.int64)


@dataclass(frozen=True)
class MirrorTask:
    """Mirror sentences "abc#cba" for a BertForMaskedLM (see the module docstring).

    num_symbols       letters (at most 26)
    min_len, max_len  letters before "#" (the sentence has 2 * len + 1 symbols)
    seed              fixes the held-out partition of the halves
    heldout_fraction  share of the halves reserved for evaluation
    mask_prob         BERT's selection probability
    """

    name: str = "mlm"
    num_symbols: int = 10
    min_len: int = 1
    max_len: int = 10
    seed: int = 0
    heldout_fraction: float = 0.1
    mask_prob: float = 0.15

    def __post_init__(self) -> None:
        if self.name != "mlm":
            raise ValueError(f"task: expected 'mlm', got {self.name!r}")
        if not is_int(self.num_symbols) or not 2 <= self.num_symbols <= len(_LETTERS):
            raise ValueError(f"num_symbols: expected an int in [2, 26] for --task mlm, got "
                             f"{self.num_symbols!r}")
        object.__setattr__(self, "num_symbols", int(self.num_symbols))
        p = self.mask_prob
        if not is_real(p) or not 0.0 < p < 1.0:
            raise ValueError(f"mask_prob: expected a float in (0, 1), got {p!r}")
        object.__setattr__(self, "mask_prob", float(p))
        # the halves and their held-out split are those of the copy task over the same letters
        inner = Task(name="copy", num_symbols=self.num_symbols, min_len=self.min_len,
                     max_len=self.max_len, seed=self.seed, heldout_fraction=self.heldout_fraction)
        for name in ("min_len", "max_len", "seed", "heldout_fraction"):   # its Python numbers
            object.__setattr__(self, name, getattr(inner, name))
        object.__setattr__(self, "_inner", inner)

    is_lm = True                    # a token-level task: npformer.training.lm_train evaluates it
    is_mlm = True
    is_classification = False
    memorise = False
    num_classes = 2
    metric_names = ("masked-token accuracy (80/10/10 rule)", "single-mask accuracy")

    @property
    def vocab(self) -> CharVocab:
        return CharVocab(_LETTERS[: self.num_symbols] + "#_")

    @property
    def vocab_size(self) -> int:
        return NUM_SPECIAL + self.num_symbols + 2

    @property
    def hash_id(self) -> int:
        return NUM_SPECIAL + self.num_symbols

    @property
    def mask_id(self) -> int:
        return NUM_SPECIAL + self.num_symbols + 1

    @property
    def word_ids(self) -> np.ndarray:
        """Ids that can be selected and that a random replacement draws from: letters and "#"."""
        return np.arange(NUM_SPECIAL, NUM_SPECIAL + self.num_symbols + 1)

    @property
    def max_src_tokens(self) -> int:
        return 2 * self.max_len + 3

    max_tgt_tokens = max_src_tokens

    def describe(self) -> str:
        return (f"task=mlm (mirror sentences abc#cba, {self.num_symbols} letters, "
                f"{self.min_len}..{self.max_len} before #, mask {self.mask_prob:g} with 80/10/10) "
                f"vocab_size={self.vocab_size}")

    def metadata(self) -> dict:
        return dict(name=self.name, num_symbols=self.num_symbols, min_len=self.min_len,
                    max_len=self.max_len, seed=self.seed, heldout_fraction=self.heldout_fraction,
                    mask_prob=self.mask_prob)

    # -- examples and batches ---------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> "MLMSample":
        ex = self._inner.sample(rng, n, split=split)
        # the masking draws come from the same stream, right after the halves
        return MLMSample(MLMExamples(ex.src, ex.src_len), self, rng)

    def heldout(self, n: int, seed: int | None = None) -> MLMExamples:
        ex = self._inner.heldout(n, seed)
        return MLMExamples(ex.src, ex.src_len)

    def clean_rows(self, ex: MLMExamples) -> tuple[np.ndarray, np.ndarray]:
        rows, lengths = sentences(ex)
        return np.where(rows == _HASH_PLACEHOLDER, self.hash_id, rows), lengths

    def collate(self, ex: MLMExamples, rng: np.random.Generator) -> MLMBatch:
        """Clean rows corrupted by the 80/10/10 rule with `rng`."""
        if len(ex) == 0:
            raise ValueError("examples: expected at least one example, got 0")
        clean, lengths = self.clean_rows(ex)                            # (N, T), (N,)
        ids, targets = mask_tokens(clean, rng, self.mask_prob, self.mask_id, self.word_ids)
        return MLMBatch(ids, targets, clean, lengths)

    def single_mask(self, ex: MLMExamples, rng: np.random.Generator) -> MLMBatch:
        """Each row with exactly one letter replaced by [MASK] (chosen with `rng`)."""
        clean, lengths = self.clean_rows(ex)                            # (N, T), (N,)
        letters = (clean >= NUM_SPECIAL) & (clean < self.hash_id)       # (N, T)
        pick = np.where(letters, rng.random(clean.shape), -1.0).argmax(axis=1)  # (N,)
        sel = np.zeros_like(letters)
        sel[np.arange(len(ex)), pick] = True
        return MLMBatch(np.where(sel, self.mask_id, clean), np.where(sel, clean, PAD), clean,
                        lengths)

    def batch_iterator(self, batch_size: int, seed: int = 0,
                       split: str = "train") -> Iterator[MLMBatch]:
        from npformer.data.tasks import collate
        rng = np.random.default_rng([seed, 0xBA7C])
        while True:
            yield collate(self.sample(rng, batch_size, split=split))

    def iterate(self, ex: MLMExamples, batch_size: int, seed: int = 0):
        """(examples, rule-masked batch, single-mask batch) over a fixed set, in order. The whole
        set is masked at once by a generator seeded by (task seed, seed), so evaluation is
        repeatable and does not depend on batch_size."""
        rng = np.random.default_rng([self.seed, seed, 0x3A5C])
        full, one = self.collate(ex, rng), self.single_mask(ex, rng)    # (N, T) each
        for start in range(0, len(ex), batch_size):
            idx = np.arange(start, min(start + batch_size, len(ex)))    # (b,)
            yield ex.take(idx), _rows(full, idx), _rows(one, idx)

    def examples_from_text(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of user sentences such as "abc#c_a" ("_" is [MASK]); a clear error otherwise."""
        texts = check_texts(texts)
        v = self.vocab
        rows = [v.encode(t, name=f"input {t!r}") for t in texts]
        for t, r in zip(texts, rows):
            if not 1 <= len(r) <= 2 * self.max_len + 1:
                raise ValueError(f"input {t!r}: expected 1..{2 * self.max_len + 1} symbols, got "
                                 f"{len(r)}")
        return rows


def _rows(batch: MLMBatch, idx: np.ndarray) -> MLMBatch:
    """Rows idx of a batch, trimmed to their longest row."""
    w = int(batch.lengths[idx].max())
    return MLMBatch(batch.ids[idx, :w], batch.targets[idx, :w], batch.clean[idx, :w],
                    batch.lengths[idx])


class MLMSample(NamedTuple):
    """Halves drawn for training plus what masks them: data.collate turns this into an MLMBatch
    (so npformer.training.resume's BatchStream, which calls collate(task.sample(...)), works unchanged)."""
    examples: MLMExamples
    task: MirrorTask
    rng: np.random.Generator

    def __len__(self) -> int:
        return len(self.examples)

    def collate(self) -> "MLMBatch":
        return collate_mlm(self)


def collate_mlm(sample: MLMSample) -> MLMBatch:
    return sample.task.collate(sample.examples, sample.rng)
