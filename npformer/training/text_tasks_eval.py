"""Evaluation of translation and classification on a user's rows (npformer.data.text_tasks), for
either twin.

Translation (a Transformer), on the held-out pairs:
    loss, token_accuracy   teacher-forced cross-entropy and argmax accuracy over target tokens
    sequence_accuracy      greedy translation equals the target exactly (as text)
    bleu, chrf             corpus BLEU (13a tokenisation) and chrF of the greedy translations
                           against the file's targets, computed by sacrebleu (the scorer published
                           results use; `pip install sacrebleu`)
Classification (an EncoderClassifier), on the held-out texts:
    accuracy (token_accuracy = sequence_accuracy), per-class precision / recall / F1, macro F1,
    the confusion matrix (rows: true label, columns: predicted) and the majority-class rate.

The twin supplies the model calls: `scores(batch) -> (nats, correct, counted)` and
`decode(src (B, S), max_new_tokens) -> (B, N) ids` (greedy, never task.suppress_ids) for
translation, `logits(batch) -> (B, C)` for classification; the defaults below are npformer's,
torchformer.training.text_eval gives torch's.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from npformer.data.text_tasks import cut_at_eos
from npformer.data.vocab import PAD
from npformer.training.metrics import EvalResult

__all__ = ["TranslationEvalResult", "ClassifyEvalResult", "evaluate_translation",
           "evaluate_classification", "corpus_scores", "classification_report", "SACREBLEU_HINT"]

SACREBLEU_HINT = "BLEU and chrF need sacrebleu: pip install sacrebleu " \
                 "(or, in the repository: pip install -e '.[text]')"


def corpus_scores(hypotheses: list[str], references: list[str]) -> tuple[float, float]:
    """(BLEU, chrF) of the hypotheses against one reference each, as sacrebleu computes them."""
    try:
        import sacrebleu
    except ImportError:
        raise ImportError(SACREBLEU_HINT) from None
    return (float(sacrebleu.corpus_bleu(hypotheses, [references]).score),
            float(sacrebleu.corpus_chrf(hypotheses, [references]).score))


@dataclass
class TranslationEvalResult(EvalResult):
    bleu: float = float("nan")
    chrf: float = float("nan")

    def summary(self) -> str:
        return (f"BLEU {self.bleu:.2f}  chrF {self.chrf:.2f}  exact match "
                f"{100 * self.sequence_accuracy:.2f}%  loss {self.loss:.4f}  token acc "
                f"{100 * self.token_accuracy:.2f}%  ({self.num_examples} held-out pairs, greedy, "
                f"sacrebleu)")

    def metrics(self) -> dict:
        return {"bleu": self.bleu, "chrf": self.chrf}


@dataclass
class ClassifyEvalResult(EvalResult):
    labels: list = field(default_factory=list)
    confusion: list = field(default_factory=list)      # [true][predicted] counts
    precision: list = field(default_factory=list)
    recall: list = field(default_factory=list)
    f1: list = field(default_factory=list)
    macro_f1: float = float("nan")
    majority_rate: float = float("nan")

    def summary(self) -> str:
        w = max(8, *(len(lab) for lab in self.labels))
        lines = [f"accuracy {100 * self.sequence_accuracy:.2f}%  macro F1 {100 * self.macro_f1:.2f}  "
                 f"loss {self.loss:.4f}  ({self.num_examples} held-out texts; majority-class rate "
                 f"{100 * self.majority_rate:.2f}%)",
                 f"  {'label':<{w}} precision  recall      F1  support"]
        for i, lab in enumerate(self.labels):
            lines.append(f"  {lab:<{w}} {100 * self.precision[i]:8.2f}% {100 * self.recall[i]:6.2f}% "
                         f"{100 * self.f1[i]:6.2f}  {sum(self.confusion[i]):7d}")
        lines.append("  confusion matrix (rows: true label, columns: predicted, in the order "
                     "above):")
        lines += ["    " + " ".join(f"{c:6d}" for c in row) for row in self.confusion]
        return "\n".join(lines)

    def metrics(self) -> dict:
        return {"accuracy": self.sequence_accuracy, "macro_f1": self.macro_f1}


def classification_report(true: np.ndarray, pred: np.ndarray, num_classes: int):
    """(confusion (C, C), precision (C,), recall (C,), f1 (C,)); a class never predicted (or
    never present) scores 0 there, as scikit-learn's zero_division=0."""
    confusion = np.zeros((num_classes, num_classes), dtype=np.int64)
    np.add.at(confusion, (true, pred), 1)
    tp = np.diag(confusion).astype(np.float64)
    predicted, present = confusion.sum(axis=0), confusion.sum(axis=1)
    precision = np.divide(tp, predicted, out=np.zeros_like(tp), where=predicted > 0)
    recall = np.divide(tp, present, out=np.zeros_like(tp), where=present > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros_like(tp), where=both > 0)
    return confusion, precision, recall, f1


def _numpy_scores(model):
    from npformer.layers.loss import CrossEntropyLoss
    from npformer.training.metrics import token_accuracy
    loss_fn = CrossEntropyLoss(ignore_index=PAD)

    def scores(batch):
        logits = model(batch.src, batch.tgt_in)                          # (B, T, V)
        k = batch.num_tokens
        c, _ = token_accuracy(logits, batch.tgt_out)
        return float(loss_fn(logits, batch.tgt_out)) * k, c, k
    return scores


def _numpy_decode(model, suppress_ids):
    from npformer.decoding.generate import greedy_decode

    def decode(src, max_new_tokens):
        return greedy_decode(model, src, max_new_tokens=max_new_tokens,
                             suppress_ids=suppress_ids).tokens
    return decode


def evaluate_translation(model, task, examples=None, *, batch_size: int = 64, num_shown: int = 0,
                         scores: Callable | None = None,
                         decode: Callable | None = None) -> TranslationEvalResult:
    """TranslationEvalResult of `model` on `examples` (default: every held-out pair)."""
    examples = task.heldout() if examples is None else examples
    scores = scores or _numpy_scores(model)
    decode = decode or _numpy_decode(model, task.suppress_ids)
    tv = task.target_vocab
    hyps: list[str] = []
    nats, correct, tokens = 0.0, 0, 0
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(examples), batch_size):
            part = examples.take(np.arange(start, min(start + batch_size, len(examples))))
            batch = part.collate()
            s, c, k = scores(batch)
            nats, correct, tokens = nats + s, correct + c, tokens + k
            out = np.asarray(decode(batch.src, None))                               # (B, N)
            hyps += [tv.decode(cut_at_eos(row)) for row in out]
    finally:
        model.train(was_training)
    pairs = task.texts(examples)
    refs = [t for _, t in pairs]
    bleu, chrf = corpus_scores(hyps, refs)
    exact = sum(h == r for h, r in zip(hyps, refs))
    shown = [(s, t, h) for (s, t), h in zip(pairs[:num_shown], hyps)]
    return TranslationEvalResult(loss=nats / max(tokens, 1), token_accuracy=correct / max(tokens, 1),
                                 sequence_accuracy=exact / max(len(refs), 1),
                                 num_examples=len(refs), num_tokens=tokens, examples=shown,
                                 bleu=bleu, chrf=chrf)


def evaluate_classification(model, task, examples=None, *, batch_size: int = 64,
                            num_shown: int = 0, logits: Callable | None = None) -> ClassifyEvalResult:
    """ClassifyEvalResult of `model` on `examples` (default: every held-out text)."""
    examples = task.heldout() if examples is None else examples
    logits = logits or (lambda batch: np.asarray(model(batch.src)))
    rows = []
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(examples), batch_size):
            batch = examples.take(np.arange(start, min(start + batch_size, len(examples)))).collate()
            rows.append(np.asarray(logits(batch), dtype=np.float64))               # (B, C)
    finally:
        model.train(was_training)
    z = np.concatenate(rows)                                                        # (N, C)
    true = np.asarray(examples.labels, dtype=np.int64)                              # (N,)
    shifted = z - z.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))             # (N, C)
    loss = float(-logp[np.arange(len(true)), true].mean())
    pred = z.argmax(axis=1)                                                         # (N,)
    confusion, precision, recall, f1 = classification_report(true, pred, task.num_classes)
    acc = float((pred == true).mean())
    train_counts = task.class_counts(task.reference_rows())
    majority = float((true == int(train_counts.argmax())).mean())   # the training majority's rate
    shown = [(t, lab, task.labels[int(p)])
             for (t, lab), p in zip(task.texts(examples)[:num_shown], pred)]
    return ClassifyEvalResult(loss=loss, token_accuracy=acc, sequence_accuracy=acc,
                              num_examples=len(true), num_tokens=len(true), examples=shown,
                              labels=list(task.labels), confusion=confusion.tolist(),
                              precision=precision.tolist(), recall=recall.tolist(), f1=f1.tolist(),
                              macro_f1=float(f1.mean()), majority_rate=majority)
