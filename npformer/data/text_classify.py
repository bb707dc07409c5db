"""Classification of a user's labelled text: ClassifyTask and build_classify_task (see
npformer.data.text_tasks for the split, the tokenizer and the batches).

With a WordPiece tokenizer (a pretrained BERT folder's vocab.txt, `npformer train --task classify
--init BERT_FOLDER`) a row is what BERT reads, [CLS] text [SEP], padded with [PAD] (id 0, checked),
which BertModel masks out; the text is cut to context - 2 tokens as for the other tokenizers."""
from __future__ import annotations

import numpy as np

from npformer.data.tasks import ClassificationBatch
from npformer.data.text_files import TextFileError
from npformer.data.text_lm import DEFAULT_CONTEXT, DEFAULT_VAL_FRACTION
from npformer.data.text_rows import read_labelled
from npformer.data.text_tasks import RowsTask, TextExamples, pad_rows, split_rows, train_tokenizer
from npformer.data.vocab import PAD
from npformer.guards.rules import check_texts

__all__ = ["ClassifyTask", "BertRows", "build_classify_task"]


SHOWN_LABELS = 12                    # labels listed by describe(); the rest are counted

class BertRows(TextExamples):
    """TextExamples whose src rows are already [CLS] text [SEP] (src_len counts both): batched
    as they are, PAD-padded, no BOS/EOS added."""
    __slots__ = ()

    def collate(self) -> ClassificationBatch:
        if len(self) == 0:
            raise ValueError("examples: expected at least one example, got 0")
        width = int(self.src_len.max())
        src = np.ascontiguousarray(self.src[:, :width], dtype=np.int64)           # (B, S)
        return ClassificationBatch(src, self.labels.astype(np.int64), self.src_len.astype(np.int64))


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
        self.bert = getattr(self.tokenizer, "kind", None) == "wordpiece"
        if self.bert and self.tokenizer.vocab.get("[PAD]") != PAD:
            raise ValueError(f"tokenizer: a WordPiece vocabulary needs [PAD] at id {PAD} (BERT's "
                             f"layout), got {self.tokenizer.vocab.get('[PAD]')}")

    def _rows_of(self, texts: list[str], labels: np.ndarray, index: np.ndarray):
        """(examples of `texts` cut to context - 2 tokens, (N,) text tokens before the cut); BERT
        rows are wrapped in [CLS] .. [SEP]."""
        limit = self.context - 2
        if not self.bert:
            ids = [self.tokenizer.encode(t) for t in texts]
            s, sl = pad_rows([r[:limit] for r in ids])
            return TextExamples(s, sl, None, None, labels, index), np.asarray([len(r) for r in ids])
        cls, sep = self.tokenizer.vocab["[CLS]"], self.tokenizer.vocab["[SEP]"]
        ids = [self.tokenizer.encode(t, add_special_tokens=False) for t in texts]
        s, sl = pad_rows([[cls] + r[:limit] + [sep] for r in ids])
        return BertRows(s, sl, None, None, labels, index), np.asarray([len(r) for r in ids])

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
        texts = [t for _, t, _ in rows]
        ex, n = self._rows_of(texts, np.asarray([index[lab] for _, _, lab in rows], dtype=np.int64),
                              np.arange(len(rows)))
        self.truncated = int((n > self.context - 2).sum())
        self._fits = n > 0
        return ex

    def examples_from_text(self, texts: list[str]) -> TextExamples:
        """Examples of user texts (plots, generate), cut to the context; label ids 0. A text of no
        tokens is refused (the model would label the empty text)."""
        texts = check_texts(texts)
        ex, lengths = self._rows_of(texts, np.zeros(len(texts), np.int64), np.arange(len(texts)))
        for t, n in zip(texts, lengths):
            if n == 0:
                raise ValueError(f"input {t!r}: encodes to no tokens; give some text to classify")
        return ex

    def text_lengths(self, texts: list[str]) -> np.ndarray:
        """(N,) tokens of each text before the cut to context - 2 (BERT: without [CLS] and [SEP])."""
        return self._rows_of(texts, np.zeros(len(texts), np.int64), np.arange(len(texts)))[1]

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
        shown = SHOWN_LABELS if self.num_classes > SHOWN_LABELS + 1 else self.num_classes
        labels = ", ".join(f"{lab} {c:,}" for lab, c in zip(self.labels[:shown], counts[:shown]))
        if shown < self.num_classes:
            labels += f", and {self.num_classes - shown:,} more"
        notes = []
        once = int((counts == 1).sum())
        if once > self.num_classes / 2 and self.num_classes > SHOWN_LABELS:
            notes.append(f"  {once:,} of the {self.num_classes:,} labels occur in one training row "
                         f"only: the label column looks like text, not labels (the layout "
                         f"is text<TAB>label; for source<TAB>target pairs, --task translate)")
        if self.truncated:
            notes.append(f"  {self.truncated:,} texts over {self.context - 2} tokens cut to that "
                         f"length (--context sets it)")
        if not self.test_only:
            tr, va = self.sets()
            seen = {text for text, _ in self.texts(tr)}
            again = sum(text in seen for text, _ in self.texts(va))
            if again:
                notes.append(f"  {again:,} held-out texts also occur in the training rows (the file "
                             f"repeats them; the held-out scores count them)")
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
