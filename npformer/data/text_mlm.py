"""Masked language modelling on your own text, for a pretrained BERT and its WordPiece vocabulary.

    task = TextMLMTask(["book.txt"], WordPieceTokenizer.from_folder("bert"), context=128)

The corpus is split, read and checked as npformer.data.text_lm does (the last val_fraction of the text
is validation). Each side is encoded once by the BERT tokenizer (without [CLS]/[SEP]). A row is a
window of context - 2 tokens between [CLS] and [SEP]:

    clean    (B, C)   [CLS] tokens[s : s + C - 2] [SEP]
    ids      (B, C)   clean corrupted by BERT's 80/10/10 rule (npformer.data.mlm_data.mask_tokens)
    targets  (B, C)   the original token at the selected positions, PAD elsewhere

Training windows start at uniform offsets of the training side; evaluation takes every
non-overlapping window of the validation side, masked by a generator seeded from the task's seed, so
the figures repeat. Selected positions are never special tokens. The loss and its `ignore_index`
treat id 0 as PAD, which is BERT's [PAD] in every BERT vocabulary (checked here).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from npformer.data.mlm_data import MLMBatch, mask_tokens
from npformer.data.text_files import TextFileError, read_corpus, read_saved
from npformer.data.text_lm import DEFAULT_CONTEXT, DEFAULT_VAL_FRACTION, TextLMTask, split_text
from npformer.data.tokenizers import tokenizer_from_dict
from npformer.data.vocab import PAD
from npformer.guards.rules import check_examples_fit_memory, check_generator, check_positive_int, is_real

__all__ = ["TextMLMTask", "TextMLMSample", "MASK_PROB"]

MASK_PROB = 0.15
_EVAL_TAG = 0x7E47


class TextMLMSample(NamedTuple):
    """Windows drawn for training and the generator that masks them (collate() gives the batch)."""
    starts: np.ndarray
    task: "TextMLMTask"
    rng: np.random.Generator
    split: str

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def collate(self) -> MLMBatch:
        return self.task.collate_starts(self.starts, self.rng, self.split)


class TextMLMTask(TextLMTask):
    """BERT's masked-token prediction on a text corpus (see the module docstring); `tokenizer` is a
    WordPieceTokenizer (or its to_dict())."""

    name = "mlm"
    is_mlm = True
    is_text = False                 # evaluated by the mlm path: masked-token and single-mask accuracy
    metric_names = ("masked-token accuracy (80/10/10 rule)", "single-mask accuracy")

    def __init__(self, files, tokenizer, context: int = DEFAULT_CONTEXT, sha256=None,
                 val_fraction: float = DEFAULT_VAL_FRACTION, seed: int = 0, corpus=None,
                 mask_prob: float = MASK_PROB):
        tok = tokenizer_from_dict(tokenizer) if isinstance(tokenizer, dict) else tokenizer
        if getattr(tok, "kind", None) != "wordpiece":
            raise ValueError(f"tokenizer: expected a WordPiece (BERT) tokenizer, got "
                             f"{getattr(tok, 'kind', type(tok).__name__)!r}")
        for t in ("[MASK]", "[PAD]"):
            if t not in tok.vocab:
                raise ValueError(f"tokenizer: vocab.txt has no {t} token")
        if tok.vocab["[PAD]"] != PAD:
            raise ValueError(f"tokenizer: expected [PAD] at id {PAD} (BERT's layout), got id "
                             f"{tok.vocab['[PAD]']}")
        if not is_real(mask_prob) or not 0.0 < mask_prob < 1.0:
            raise ValueError(f"mask_prob: expected a float in (0, 1), got {mask_prob!r}")
        super().__init__(files, tok, context=context, sha256=sha256, val_fraction=val_fraction,
                         seed=seed, corpus=corpus)
        self.mask_prob = float(mask_prob)

    # -- ids ---------------------------------------------------------------------------------------
    @property
    def mask_id(self) -> int:
        return self.tokenizer.vocab["[MASK]"]

    @property
    def word_ids(self) -> np.ndarray:
        """Ids a position may hold to be selected, and a random replacement draws from."""
        return np.setdiff1d(np.arange(self.vocab_size), sorted(self.tokenizer.special_ids))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(training ids, validation ids), int32, without [CLS]/[SEP]; read on first use."""
        if self._arrays is None:
            corpus = self._corpus if self._corpus is not None else \
                read_saved(read_corpus, self.files, self.sha256)
            if self.sha256 is not None and corpus.sha256 != self.sha256:
                raise TextFileError(self._where(), "the text has changed since the checkpoint "
                                                   "was written (its SHA-256 differs)")
            train_text, val_text = split_text(corpus.text, self.val_fraction)
            enc = self.tokenizer.encode
            tr = np.asarray(enc(train_text, add_special_tokens=False), dtype=np.int32)
            va = np.asarray(enc(val_text, add_special_tokens=False), dtype=np.int32)
            need = self.context - 1
            if min(len(tr), len(va)) < need:
                raise TextFileError(self._where(), f"too short for --context {self.context}: "
                                    f"{len(tr)} training and {len(va)} validation WordPiece "
                                    f"tokens, each side needs at least {need}")
            self._corpus, self._arrays = corpus, (tr, va)
            self.sha256 = corpus.sha256
        return self._arrays

    def describe(self) -> str:
        tr, va = self.arrays()
        c = self.corpus
        files = f"{len(c.files)} files" if len(c.files) > 1 else c.files[0]
        return (f"task=mlm on text: {files} ({len(c.text):,} characters); wordpiece tokenizer, "
                f"vocab_size={self.vocab_size}; {len(tr):,} training / {len(va):,} validation "
                f"tokens; rows of {self.context} ([CLS] + {self.context - 2} + [SEP]), mask "
                f"{self.mask_prob:g} with 80/10/10")

    def metadata(self) -> dict:
        return {**super().metadata(), "mask_prob": self.mask_prob}

    # -- rows --------------------------------------------------------------------------------------
    def clean_rows(self, starts: np.ndarray, split: str) -> np.ndarray:
        """(N, C) [CLS] window [SEP] for windows starting at `starts` of one side."""
        src = self.arrays()[0 if split == "train" else 1]
        w = self.context - 2
        cols = starts[:, None] + np.arange(w)[None, :]                    # (N, C - 2)
        n = starts.shape[0]
        cls = np.full((n, 1), self.tokenizer.vocab["[CLS]"], dtype=np.int64)
        sep = np.full((n, 1), self.tokenizer.vocab["[SEP]"], dtype=np.int64)
        return np.concatenate([cls, src[cols].astype(np.int64), sep], axis=1)   # (N, C)

    def collate_starts(self, starts: np.ndarray, rng: np.random.Generator, split: str) -> MLMBatch:
        clean = self.clean_rows(starts, split)
        ids, targets = mask_tokens(clean, rng, self.mask_prob, self.mask_id, self.word_ids)
        return MLMBatch(ids, targets, clean, np.full(len(starts), self.context, dtype=np.int64))

    def sample(self, rng: np.random.Generator, n: int, split: str = "train") -> TextMLMSample:
        if split not in ("train", "heldout"):
            raise ValueError(f"split: expected 'train' or 'heldout', got {split!r}")
        n = check_positive_int("n", n)
        check_generator(rng)
        check_examples_fit_memory("n", n, 8, "its window start (int64)")
        src = self.arrays()[0 if split == "train" else 1]
        starts = rng.integers(0, len(src) - (self.context - 2) + 1, size=n)
        return TextMLMSample(starts.astype(np.int64), self, rng, split)

    def heldout(self, n: int | None = None, seed: int | None = None) -> np.ndarray:
        """Starts of the first `n` non-overlapping windows of the validation side."""
        va = self.arrays()[1]
        w = self.context - 2
        starts = np.arange(0, len(va) - w + 1, w, dtype=np.int64)
        return starts[: max(int(n), 1)] if n is not None else starts

    def iterate(self, starts: np.ndarray, batch_size: int, seed: int = 0):
        """(starts, rule-masked batch, single-mask batch) over the held-out windows, masked at once
        by a generator seeded by (task seed, seed): repeatable, independent of batch_size."""
        rng = np.random.default_rng([self.seed, seed, _EVAL_TAG])
        full = self.collate_starts(starts, rng, "heldout")                       # (N, C)
        words = np.isin(full.clean, self.word_ids)                               # (N, C)
        pick = np.where(words, rng.random(full.clean.shape), -1.0).argmax(axis=1)   # (N,)
        sel = np.zeros_like(words)
        sel[np.arange(len(starts)), pick] = words[np.arange(len(starts)), pick]
        one = MLMBatch(np.where(sel, self.mask_id, full.clean), np.where(sel, full.clean, PAD),
                       full.clean, full.lengths)
        for a in range(0, len(starts), batch_size):
            i = np.arange(a, min(a + batch_size, len(starts)))
            yield starts[i], MLMBatch(*(f[i] for f in full)), MLMBatch(*(f[i] for f in one))

    def __repr__(self) -> str:
        return (f"TextMLMTask({self._where()!r}, {self.tokenizer!r}, context={self.context}, "
                f"val_fraction={self.val_fraction})")
