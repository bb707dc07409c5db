"""What a run reports: the per-step record of training (TrainResult), held-out loss and accuracies
(EvalResult), and the token and exact-sequence matches they count."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from npformer.data.tasks import ClassificationBatch
from npformer.data.vocab import EOS, PAD


def sequence_matches(pred: np.ndarray, tgt_out: np.ndarray, eos_id: int = EOS,
                     pad_id: int = PAD) -> np.ndarray:
    """(B,) bool: each predicted row equals its target up to and including the target's EOS.

    pred (B, Tp) generated tokens (anything after EOS is ignored); tgt_out (B, T) target + EOS, PAD-
    padded. A prediction that is shorter than the target (stopped early, no EOS) is wrong.
    """
    pred, tgt_out = np.asarray(pred), np.asarray(tgt_out)
    B, T = tgt_out.shape
    width = max(T, pred.shape[1])
    p = np.full((B, width), pad_id, dtype=np.int64)                   # (B, W)
    p[:, : pred.shape[1]] = pred
    t = np.full((B, width), pad_id, dtype=np.int64)                   # (B, W)
    t[:, :T] = tgt_out
    counted = np.cumsum(t == eos_id, axis=1) - (t == eos_id) == 0     # (B, W) up to the first EOS
    counted &= t != pad_id
    return ((p == t) | ~counted).all(axis=1)                          # (B,)


@dataclass
class EvalResult:
    loss: float
    token_accuracy: float
    sequence_accuracy: float
    num_examples: int
    num_tokens: int
    examples: list = field(default_factory=list)     # (source, target, prediction) strings

    def summary(self) -> str:
        return (f"loss {self.loss:.4f}  token acc {100 * self.token_accuracy:.2f}%  "
                f"exact-sequence acc {100 * self.sequence_accuracy:.2f}%  "
                f"({self.num_examples} held-out examples)")


def token_accuracy(logits: np.ndarray, targets: np.ndarray, ignore_index: int = PAD) -> tuple[int, int]:
    """(correct, counted): argmax over the last axis equals the target, ignoring `ignore_index`."""
    pred = np.asarray(logits).argmax(axis=-1)                          # (...,)
    keep = targets != ignore_index                                    # (...,)
    return int(((pred == targets) & keep).sum()), int(keep.sum())


class EvalTally:
    """The running sums of a synthetic-task evaluation, one per evaluate() call of either twin: each
    batch adds its NumPy logits, targets, mean loss and, for a seq2seq batch that was decoded, the
    greedy tokens; `result()` is the EvalResult. The loss is averaged over target tokens (over
    examples for a classifier), as training averages it."""

    def __init__(self, vocab, num_shown: int = 0):
        self.vocab, self.num_shown = vocab, num_shown
        self.loss = 0.0
        self.correct = self.counted = self.seq_ok = self.n = 0
        self.shown: list = []

    def add(self, batch, logits: np.ndarray, targets: np.ndarray, mean_loss: float,
            tokens: np.ndarray | None = None) -> None:
        """logits (B, T, V) or (B, C); targets (B, T) or (B,); tokens (B, Tp) greedy output or None."""
        room = range(min(self.num_shown - len(self.shown), targets.shape[0]))
        decode = self.vocab.decode
        self.n += targets.shape[0]
        if isinstance(batch, ClassificationBatch):
            pred = logits.argmax(axis=-1)                                    # (B,)
            c = int((pred == targets).sum())
            self.loss += mean_loss * targets.shape[0]
            self.correct += c
            self.seq_ok += c
            self.counted += targets.shape[0]
            self.shown += [(decode(batch.src[i]), str(int(targets[i])), str(int(pred[i]))) for i in room]
            return
        self.loss += mean_loss * int((targets != PAD).sum())
        c, k = token_accuracy(logits, targets)
        self.correct += c
        self.counted += k
        if tokens is not None:
            self.seq_ok += int(sequence_matches(tokens, batch.tgt_out).sum())    # (B,) summed
            self.shown += [(decode(batch.src[i]), decode(batch.tgt_out[i]), decode(tokens[i]))
                           for i in room]

    def result(self, decoded: bool) -> EvalResult:
        """decoded: every batch was decoded (or is a classifier's); otherwise sequence accuracy is NaN."""
        return EvalResult(loss=self.loss / max(self.counted, 1),
                          token_accuracy=self.correct / max(self.counted, 1),
                          sequence_accuracy=self.seq_ok / self.n if decoded else float("nan"),
                          num_examples=self.n, num_tokens=self.counted, examples=self.shown)


@dataclass
class TrainResult:
    steps: int
    losses: list                        # training loss of every step
    lrs: list                           # learning rate used at every step
    grad_norms: list                    # global gradient norm before clipping, every step
    eval_history: list                  # [(step, EvalResult)]
    tokens: int                         # target tokens seen
    seconds: float                      # wall time of the loop (evaluations excluded)
    loss_steps: list | None = None      # step of each loss when not consecutive (a run's kept history)

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else float("nan")
