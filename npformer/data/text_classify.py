"""Classification of a user's labelled text: ClassifyTask and build_classify_task (see
npformer.data.text_tasks for the split, the tokenizer and the batches)."""
from __future__ import annotations

import numpy as np

from npformer.data.text_files import TextFileError
from npformer.data.text_lm import DEFAULT_CONTEXT, DEFAULT_VAL_FRACTION
from npformer.data.text_rows import read_labelled
from npformer.data.text_tasks import RowsTask, TextExamples, pad_rows, split_rows, train_tokenizer

__all__ = ["ClassifyTask", "build_classify_task"]


class ClassifyTask(RowsTask):
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
        s, sl = pad_rows([r[:limit] for r in ids])
        labels = np.asarray([index[lab] for _, _, lab in rows], dtype=np.int64)
        return TextExamples(s, sl, None, None, labels, np.arange(len(rows)))

    def examples_from_text(self, texts: list[str]) -> TextExamples:
        """Examples of user texts (plots, generate), cut to the context; label ids 0."""
        limit = self.context - 2
        s, sl = pad_rows([self.tokenizer.encode(t)[:limit] for t in texts])
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
