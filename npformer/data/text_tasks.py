"""Translation and classification on a user's own rows of text (npformer.data.text_rows reads them):

    build_translate_task(paths, tokenizer="char", shared_vocab=False, ...)   -> TranslateTask
                                                                    (npformer.data.text_translate)
    build_classify_task(path, tokenizer="char", ...)                        -> ClassifyTask
                                                                    (npformer.data.text_classify)

This file holds what both share: the examples, the split, the tokenizer training, RowsTask.

Split: the rows are shuffled once by a generator seeded with `seed` and the last `val_fraction` of
them (at least one) is held out; training and held-out rows never share a line of the file.
Tokenizers (npformer.data.tokenizers, "char" or "bpe") are trained on the training rows only: the
source side and the target side each get their own, or one for both with `shared_vocab`. They are
saved in the task's metadata, so a checkpoint translates or classifies from the file alone.

Rows become the Examples of npformer.data.tasks, so batching is the synthetic tasks' own:

    translate   src  = source tokens + EOS                   (the encoder's input)
                tgt_in = BOS + target tokens, tgt_out = target tokens + EOS
    classify    src  = BOS + text tokens + EOS, labels = the label's id

`context` is the model's max_len. A translation pair with a side longer than context - 1 tokens is
left out (counted, its first line named in describe()); a text to classify longer than context - 2
tokens is cut to that length (counted too). Labels are strings; their ids follow sorted order and
the map is part of the metadata.
"""
from __future__ import annotations

import copy
import hashlib
from typing import NamedTuple

import numpy as np

from npformer.data.tasks import Examples, collate
from npformer.data.text_files import TextFileError, read_saved
from npformer.data.text_lm import DEFAULT_BPE_VOCAB, DEFAULT_CONTEXT, DEFAULT_VAL_FRACTION, TextVocab, check_vocab_size
from npformer.data.text_rows import Rows
from npformer.data.tokenizers import BPETokenizer, CharTokenizer, tokenizer_from_dict
from npformer.data.vocab import EOS
from npformer.guards.rules import (
    check_examples_fit_memory,
    check_generator,
    check_positive_int,
    is_int,
    is_real,
)

__all__ = ["TextExamples", "RowsTask", "ROW_TASKS", "split_rows", "train_tokenizer", "cut_at_eos",
           "pad_rows", "rows_digest"]

ROW_TASKS = ("translate", "classify")
_SPLIT_TAG = 0x5917


class TextExamples(NamedTuple):
    """Examples (npformer.data.tasks) plus `index`, each row's position in the task's rows."""
    src: np.ndarray
    src_len: np.ndarray
    tgt: np.ndarray | None
    tgt_len: np.ndarray | None
    labels: np.ndarray | None
    index: np.ndarray

    def __len__(self) -> int:
        return int(self.src.shape[0])

    def take(self, idx) -> TextExamples:
        pick = lambda a: None if a is None else a[idx]  # noqa: E731
        return type(self)(self.src[idx], self.src_len[idx], pick(self.tgt), pick(self.tgt_len),
                          pick(self.labels), self.index[idx])

    def collate(self):
        return collate(Examples(*self[:5]))


def split_rows(n: int, val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(training, held-out) row indices, each sorted: a seeded shuffle, the last share held out."""
    if n < 2:
        raise ValueError(f"rows: expected at least 2 (one to train on, one to hold out), got {n}")
    perm = np.random.default_rng([seed, _SPLIT_TAG]).permutation(n)
    k = min(n - 1, max(1, int(round(n * val_fraction))))
    return np.sort(perm[: n - k]), np.sort(perm[n - k:])


def train_tokenizer(kind: str, texts: list[str], vocab_size: int | None):
    """A char or BPE tokenizer trained on `texts` (one per line)."""
    vocab_size = check_vocab_size(vocab_size)
    text = "\n".join(texts)
    if kind == "char":
        if vocab_size is not None:
            raise ValueError(f"--vocab-size {vocab_size}: only for --tokenizer bpe")
        return CharTokenizer.train(text)
    if kind != "bpe":
        raise ValueError(f"tokenizer: expected 'char' or 'bpe', got {kind!r}")
    size = DEFAULT_BPE_VOCAB if vocab_size is None else vocab_size
    if size < 259:
        raise ValueError(f"--vocab-size {size}: expected >= 259 for --tokenizer bpe")
    return BPETokenizer.train(text, size)


def cut_at_eos(ids) -> list[int]:
    """The ids before the first EOS (a generated row: EOS, then padding)."""
    ids = [int(i) for i in np.asarray(ids).reshape(-1)]
    return ids[: ids.index(EOS)] if EOS in ids else ids


def pad_rows(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded (N, L) int32 ids and (N,) lengths."""
    lens = np.asarray([len(r) for r in rows], dtype=np.int64)
    out = np.zeros((len(rows), max(int(lens.max(initial=0)), 1)), dtype=np.int32)
    for i, r in enumerate(rows):                          # once per row, when the task is built
        out[i, : len(r)] = r
    return out, lens


class RowsTask:
    """What both row tasks share: the rows, the split, the tokenizer(s), the metadata."""

    is_text = True
    is_lm = False
    memorise = False
    reader = None                   # the subclass's file reader (npformer.data.text_rows)

    def __init__(self, data, tokenizer, context: int = DEFAULT_CONTEXT, sha256: str | None = None,
                 val_fraction: float = DEFAULT_VAL_FRACTION, seed: int = 0, rows: Rows | None = None):
        if not isinstance(data, (list, tuple)) or not data or not all(isinstance(f, str) for f in data):
            raise ValueError(f"data: expected a non-empty list of file paths, got {data!r}")
        if not is_int(context) or context < 3:
            raise ValueError(f"context: expected an int >= 3, got {context!r}")
        if not is_real(val_fraction) or not 0.0 < val_fraction < 0.5:
            raise ValueError(f"val_fraction: expected a float in (0, 0.5), got {val_fraction!r}")
        if not is_int(seed) or seed < 0:
            raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
        self.files, self.context, self.val_fraction, self.seed = list(data), int(context), \
            float(val_fraction), int(seed)
        self.tokenizer = tokenizer_from_dict(tokenizer) if isinstance(tokenizer, dict) else tokenizer
        self.sha256 = sha256 if sha256 is not None else (rows_digest(rows) if rows else None)
        self._rows, self._sets = rows, None
        self.test_only = False

    def on_file(self, paths) -> RowsTask:
        """This task (model, tokenizers, labels) on another file whose rows are all held out: a
        test set (`npformer evaluate CKPT --data FILE`)."""
        other = copy.copy(self)
        other.files = [paths] if isinstance(paths, str) else [str(p) for p in paths]
        other._rows, other._sets, other.sha256, other.test_only = None, None, None, True
        return other

    @property
    def vocab(self) -> TextVocab:
        return TextVocab(self.tokenizer)

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def num_symbols(self) -> int:
        return self.vocab_size - 3

    @property
    def max_len(self) -> int:
        return self.context

    max_src_tokens = max_tgt_tokens = max_len

    def _where(self) -> str:
        return " ".join(self.files)

    def rows(self) -> Rows:
        if self._rows is None:
            rows = read_saved(self.reader, self.files if len(self.files) > 1 else self.files[0],
                              self.sha256)
            if self.sha256 is not None and rows_digest(rows) != self.sha256:
                raise TextFileError(self._where(), "the file has changed since the checkpoint was "
                                                   "written (its SHA-256 differs); training and "
                                                   "evaluation need the same rows")
            self._rows = rows
        return self._rows

    def sets(self) -> tuple[TextExamples, TextExamples]:
        """(training, held-out) examples, encoded once."""
        if self._sets is None:
            rows = self.rows().rows
            tr, va = (np.arange(0), np.arange(len(rows))) if self.test_only else \
                split_rows(len(rows), self.val_fraction, self.seed)
            ex = self._encode(rows)
            self._sets = (self._keep(ex, tr, "training"), self._keep(ex, va, "held-out"))
        return self._sets

    def _keep(self, ex: TextExamples, idx: np.ndarray, what: str) -> TextExamples:
        idx = idx[self._fits[idx]]
        if idx.size == 0 and not (self.test_only and what == "training"):
            raise TextFileError(self._where(), f"no {what} row fits --context {self.context} "
                                               f"tokens; use a larger --context")
        return ex.take(idx)

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> TextExamples:
        if split not in ("train", "heldout"):
            raise ValueError(f"split: expected 'train' or 'heldout', got {split!r}")
        n = check_positive_int("n", n)
        check_generator(rng)
        ex = self.sets()[0 if split == "train" else 1]
        check_examples_fit_memory("n", n, ex.src[0].nbytes + (0 if ex.tgt is None else ex.tgt[0].nbytes)
                                  + 24, f"its rows (source {ex.src.shape[1]} and target "
                                  f"{0 if ex.tgt is None else ex.tgt.shape[1]} tokens) and indices")
        return ex.take(rng.integers(0, len(ex), size=n))

    def heldout(self, n: int | None = None, seed: int | None = None) -> TextExamples:
        """The first `n` held-out rows (all when None), in file order."""
        va = self.sets()[1]
        return va if n is None else va.take(np.arange(min(int(n), len(va))))

    def line_of(self, index: int) -> int:
        return self.rows().rows[int(index)][0]

    def _common_metadata(self) -> dict:
        return dict(name=self.name, data=self.files, sha256=self.sha256,
                    tokenizer=self.tokenizer.to_dict(), context=self.context,
                    val_fraction=self.val_fraction, seed=self.seed)

    def _sizes_text(self, noun: str) -> str:
        tr, va = self.sets()
        rows = self.rows()
        blank = f", {rows.blank} blank lines skipped" if rows.blank else ""
        if self.test_only:
            return f"{len(rows):,} {noun}{blank}, every one held out (a test file)"
        return f"{len(rows):,} rows{blank}; {len(tr):,} training / {len(va):,} held-out {noun}"


def rows_digest(rows: Rows) -> str:
    return hashlib.sha256(rows.text.encode("utf-8")).hexdigest()
