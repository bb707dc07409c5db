"""Translation and classification on a user's own rows of text (npformer.data.text_rows reads them):

    build_translate_task(paths, tokenizer="char", shared_vocab=False, ...)   -> TranslateTask
    build_classify_task(path, tokenizer="char", ...)                        -> ClassifyTask

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
from npformer.data.text_files import TextFileError
from npformer.data.text_lm import DEFAULT_BPE_VOCAB, DEFAULT_CONTEXT, DEFAULT_VAL_FRACTION, TextVocab
from npformer.data.text_rows import Rows, read_labelled, read_pairs
from npformer.data.tokenizers import BPETokenizer, CharTokenizer, tokenizer_from_dict
from npformer.data.tokenizers.char import UNK
from npformer.data.vocab import BOS, EOS, PAD

__all__ = ["TextExamples", "TranslateTask", "ClassifyTask", "build_translate_task",
           "build_classify_task", "ROW_TASKS", "split_rows", "train_tokenizer", "cut_at_eos"]

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
        return TextExamples(self.src[idx], self.src_len[idx], pick(self.tgt), pick(self.tgt_len),
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


def _pad(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded (N, L) int32 ids and (N,) lengths."""
    lens = np.asarray([len(r) for r in rows], dtype=np.int64)
    out = np.zeros((len(rows), max(int(lens.max(initial=0)), 1)), dtype=np.int32)
    for i, r in enumerate(rows):                          # once per row, when the task is built
        out[i, : len(r)] = r
    return out, lens


class _RowsTask:
    """What both row tasks share: the rows, the split, the tokenizer(s), the metadata."""

    is_text = True
    is_lm = False
    memorise = False
    reader = staticmethod(read_pairs)

    def __init__(self, data, tokenizer, context: int = DEFAULT_CONTEXT, sha256: str | None = None,
                 val_fraction: float = DEFAULT_VAL_FRACTION, seed: int = 0, rows: Rows | None = None):
        if not isinstance(data, (list, tuple)) or not data or not all(isinstance(f, str) for f in data):
            raise ValueError(f"data: expected a non-empty list of file paths, got {data!r}")
        if not isinstance(context, int) or isinstance(context, bool) or context < 3:
            raise ValueError(f"context: expected an int >= 3, got {context!r}")
        if not isinstance(val_fraction, (int, float)) or not 0.0 < val_fraction < 0.5:
            raise ValueError(f"val_fraction: expected a float in (0, 0.5), got {val_fraction!r}")
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
        self.files, self.context, self.val_fraction, self.seed = list(data), context, \
            float(val_fraction), seed
        self.tokenizer = tokenizer_from_dict(tokenizer) if isinstance(tokenizer, dict) else tokenizer
        self.sha256 = sha256 if sha256 is not None else (_digest(rows) if rows else None)
        self._rows, self._sets = rows, None
        self.test_only = False

    def on_file(self, paths) -> _RowsTask:
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
            rows = self.reader(self.files if len(self.files) > 1 else self.files[0])
            if self.sha256 is not None and _digest(rows) != self.sha256:
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
        ex = self.sets()[0 if split == "train" else 1]
        return ex.take(rng.integers(0, len(ex), size=int(n)))

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


def _digest(rows: Rows) -> str:
    return hashlib.sha256(rows.text.encode("utf-8")).hexdigest()


class TranslateTask(_RowsTask):
    """Source text -> target text for an encoder-decoder Transformer (see the module docstring).
    `target_tokenizer` None: one vocabulary for both sides (shared embeddings)."""

    name = "translate"
    is_classification = False
    num_classes = 2
    metric_names = ("token accuracy", "exact-match")

    def __init__(self, data, tokenizer, target_tokenizer=None, **kw):
        super().__init__(data, tokenizer, **kw)
        t = target_tokenizer
        self.target_tokenizer = tokenizer_from_dict(t) if isinstance(t, dict) else t

    @property
    def shared_vocab(self) -> bool:
        return self.target_tokenizer is None

    @property
    def target_vocab(self) -> TextVocab:
        return TextVocab(self.target_tokenizer or self.tokenizer)

    @property
    def suppress_ids(self) -> list[int]:
        """Target ids a translation never generates: PAD, BOS (and the char tokenizer's UNK)."""
        kind = (self.target_tokenizer or self.tokenizer).kind
        return [PAD, BOS] + ([UNK] if kind == "char" else [])

    def config_fields(self) -> dict:
        """TransformerConfig fields beyond vocab_size (npformer.training.train.model_config_for)."""
        tgt = (self.target_tokenizer or self.tokenizer).vocab_size
        return dict(src_vocab_size=self.vocab_size, tgt_vocab_size=tgt,
                    share_embeddings=self.shared_vocab)

    def _encode(self, rows) -> TextExamples:
        tgt_tok = self.target_tokenizer or self.tokenizer
        src = [self.tokenizer.encode(a) for _, a, _ in rows]
        tgt = [tgt_tok.encode(b) for _, _, b in rows]
        limit = self.context - 1                                  # + EOS (src, tgt_out) or BOS
        self._fits = np.asarray([len(s) <= limit and len(t) <= limit for s, t in zip(src, tgt)])
        (s, sl), (t, tl) = _pad(src), _pad(tgt)
        return TextExamples(s, sl, t, tl, None, np.arange(len(rows)))

    def examples_from_text(self, texts: list[str]) -> TextExamples:
        """Examples of user sources (plots, generate) with empty targets; a source longer than
        the context raises ValueError naming it."""
        ids = [self.tokenizer.encode(t) for t in texts]
        for t, r in zip(texts, ids):
            if not 1 <= len(r) <= self.context - 1:
                raise ValueError(f"input {t[:40]!r}: {len(r)} {self.tokenizer.kind} tokens; the "
                                 f"model reads 1 to {self.context - 1} (its --context, with EOS)")
        s, sl = _pad(ids)
        empty = np.zeros((len(ids), 1), np.int32)
        return TextExamples(s, sl, empty, np.zeros(len(ids), np.int64), None, np.arange(len(ids)))

    def texts(self, ex: TextExamples) -> list[tuple[str, str]]:
        """(source, target) strings of `ex`'s rows, as the file has them."""
        rows = self.rows().rows
        return [(rows[i][1], rows[i][2]) for i in ex.index]

    def describe(self) -> str:
        left = np.flatnonzero(~self._fits_all())
        out = (f"  {left.size:,} pairs with a side over {self.context - 1} tokens left out (first "
               f"at line {self.line_of(left[0])}; --context sets the limit)") if left.size else ""
        vocab = (f"one shared {self.tokenizer.kind} vocabulary of {self.vocab_size}"
                 if self.shared_vocab else
                 f"{self.tokenizer.kind} vocabularies: source {self.vocab_size}, target "
                 f"{self.target_tokenizer.vocab_size}")
        tr, va = self.sets()
        seen = {a for a, _ in self.texts(tr)}
        again = sum(a in seen for a, _ in self.texts(va))
        dup = (f"  {again:,} held-out sources also occur in the training rows (the file repeats "
               f"them; the held-out scores count them)") if again else ""
        return (f"task=translate on {self._where()}: {self._sizes_text('pairs')}; {vocab}; "
                f"context {self.context}" + "".join(f"\n{n}" for n in (out, dup) if n))

    def _fits_all(self) -> np.ndarray:
        self.sets()
        return self._fits

    def metadata(self) -> dict:
        return dict(self._common_metadata(), target_tokenizer=None if self.shared_vocab else
                    self.target_tokenizer.to_dict())


class ClassifyTask(_RowsTask):
    """Text -> one of `labels` for an EncoderClassifier (see the module docstring)."""

    name = "classify"
    is_classification = True
    reader = staticmethod(read_labelled)

    def __init__(self, data, tokenizer, labels, **kw):
        super().__init__(data, tokenizer, **kw)
        if not isinstance(labels, (list, tuple)) or len(labels) < 2 or len(set(labels)) != len(labels):
            raise ValueError(f"labels: expected at least 2 distinct label strings, got {labels!r}")
        self.labels = [str(x) for x in labels]

    @property
    def num_classes(self) -> int:
        return len(self.labels)

    @property
    def label_index(self) -> dict:
        return {lab: i for i, lab in enumerate(self.labels)}

    def _encode(self, rows) -> TextExamples:
        index = self.label_index
        unknown = [(n, lab) for n, _, lab in rows if lab not in index]
        if unknown:
            raise TextFileError(self._where(), f"line {unknown[0][0]}: label {unknown[0][1]!r} is "
                                               f"not one of the checkpoint's {self.labels}")
        ids = [self.tokenizer.encode(t) for _, t, _ in rows]
        limit = self.context - 2                                  # BOS + text + EOS
        self.truncated = sum(len(r) > limit for r in ids)
        self._fits = np.asarray([len(r) > 0 for r in ids])
        s, sl = _pad([r[:limit] for r in ids])
        labels = np.asarray([index[lab] for _, _, lab in rows], dtype=np.int64)
        return TextExamples(s, sl, None, None, labels, np.arange(len(rows)))

    def examples_from_text(self, texts: list[str]) -> TextExamples:
        """Examples of user texts (plots, generate), cut to the context; label ids 0."""
        limit = self.context - 2
        s, sl = _pad([self.tokenizer.encode(t)[:limit] for t in texts])
        return TextExamples(s, sl, None, None, np.zeros(len(texts), np.int64), np.arange(len(texts)))

    def texts(self, ex: TextExamples) -> list[tuple[str, str]]:
        rows = self.rows().rows
        return [(rows[i][1], rows[i][2]) for i in ex.index]

    def reference_rows(self) -> TextExamples:
        """The rows whose majority label is the baseline: the training rows (a test file: its own)."""
        tr, va = self.sets()
        return va if self.test_only else tr

    def class_counts(self, ex: TextExamples) -> np.ndarray:
        return np.bincount(ex.labels, minlength=self.num_classes)

    def describe(self) -> str:
        counts = self.class_counts(self.reference_rows())
        share = counts / counts.sum()
        top = int(share.argmax())
        labels = ", ".join(f"{lab} {c:,}" for lab, c in zip(self.labels, counts))
        notes = []
        if self.truncated:
            notes.append(f"  {self.truncated:,} texts over {self.context - 2} tokens cut to that "
                         f"length (--context sets it)")
        if share[top] >= 0.8:
            notes.append(f"  imbalanced: {100 * share[top]:.1f}% of the training rows are "
                         f"{self.labels[top]!r}; accuracy alone says little, read the macro F1")
        return (f"task=classify on {self._where()}: {self._sizes_text('texts')}; "
                f"{self.num_classes} labels ({'' if self.test_only else 'training '}rows: {labels}; "
                f"majority-class rate "
                f"{100 * share[top]:.1f}%); {self.tokenizer.kind} vocabulary of {self.vocab_size}; "
                f"context {self.context}" + "".join("\n" + n for n in notes))

    def metadata(self) -> dict:
        return dict(self._common_metadata(), labels=self.labels)


def build_translate_task(paths, tokenizer: str = "char", vocab_size: int | None = None,
                         shared_vocab: bool = False, context: int = DEFAULT_CONTEXT,
                         val_fraction: float = DEFAULT_VAL_FRACTION, seed: int = 0) -> TranslateTask:
    """Read the pairs, split them, train the tokenizer(s) on the training rows; every problem with
    the files is reported here, before a model exists."""
    rows = read_pairs(paths)
    tr, _ = split_rows(len(rows), val_fraction, seed)
    src = [rows.rows[i][1] for i in tr]
    tgt = [rows.rows[i][2] for i in tr]
    if shared_vocab:
        src_tok, tgt_tok = train_tokenizer(tokenizer, src + tgt, vocab_size), None
    else:
        src_tok, tgt_tok = train_tokenizer(tokenizer, src, vocab_size), \
            train_tokenizer(tokenizer, tgt, vocab_size)
    task = TranslateTask(rows.files, src_tok, tgt_tok, context=context, val_fraction=val_fraction,
                         seed=seed, rows=rows)
    task.sets()
    return task


def build_classify_task(path, tokenizer: str = "char", vocab_size: int | None = None,
                        context: int = DEFAULT_CONTEXT, val_fraction: float = DEFAULT_VAL_FRACTION,
                        seed: int = 0) -> ClassifyTask:
    """Read the labelled texts, split them, train the tokenizer on the training rows."""
    paths = [path] if isinstance(path, str) else list(path)
    if len(paths) != 1:
        raise TextFileError(" ".join(paths), f"expected one file of labelled texts, got {len(paths)}")
    rows = read_labelled(paths[0])
    labels = sorted({lab for _, _, lab in rows.rows})
    if len(labels) < 2:
        raise TextFileError(paths[0], f"every row has the label {labels[0]!r}: a classifier needs "
                                      f"at least two labels")
    tr, _ = split_rows(len(rows), val_fraction, seed)
    tok = train_tokenizer(tokenizer, [rows.rows[i][1] for i in tr], vocab_size)
    task = ClassifyTask(rows.files, tok, labels, context=context, val_fraction=val_fraction,
                        seed=seed, rows=rows)
    task.sets()
    return task
