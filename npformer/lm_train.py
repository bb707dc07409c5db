"""Evaluation of a CausalLM on a language-model task (npformer.lm_data); the twin is
torchformer/lm_train.py. Training itself is npformer.train.train (it reads LMBatch):

    logits = model(ids)                                      (B, T, V)   causal, PAD keys masked
    loss   = CrossEntropy(logits, targets)                   mean over non-PAD targets

evaluate_lm() reports, on a fixed set of held-out problems:
    loss              teacher-forced cross-entropy over every target token (the operands' digits
                      included: they are uniform, so this loss has a floor well above 0)
    token_accuracy    teacher-forced argmax == target on the answer tokens (a+b's digits and EOS)
    sequence_accuracy exact match: greedy completion of BOS "a+b=" is a+b's digits then EOS
"""
from __future__ import annotations

import numpy as np

from npformer.data import PAD

__all__ = ["lm_forward", "evaluate_lm", "answer_accuracy"]


def lm_forward(model, batch):
    """Logits (B, T, V) and targets (B, T) of one LMBatch."""
    return model(batch.ids), batch.targets


def answer_accuracy(logits: np.ndarray, batch) -> tuple[int, int]:
    """(correct, counted): teacher-forced argmax equals the target on the answer tokens."""
    pred = np.asarray(logits).argmax(axis=-1)                           # (B, T)
    keep = batch.answer_mask                                            # (B, T)
    return int(((pred == batch.targets) & keep).sum()), int(keep.sum())


def evaluate_lm(model, task, examples=None, *, batch_size: int = 256, greedy: bool = True,
                num_shown: int = 0, max_new_tokens: int | None = None):
    """EvalResult (npformer.train) of `model` on `examples` (default task.heldout(500))."""
    from npformer.generate import greedy_decode
    from npformer.loss import CrossEntropyLoss
    from npformer.train import EvalResult, sequence_matches
    if examples is None:
        examples = task.heldout(500)
    vocab = task.vocab
    loss_fn = CrossEntropyLoss(ignore_index=PAD)
    was_training = model.training
    model.eval()
    total_loss = tokens = correct = counted = seq_ok = n = 0
    shown: list = []
    try:
        for part, batch in task.iterate(examples, batch_size):
            logits, targets = lm_forward(model, batch)                  # (B, T, V), (B, T)
            k = batch.num_tokens
            total_loss += float(loss_fn(logits, targets)) * k
            tokens += k
            c, m = answer_accuracy(logits, batch)
            correct += c
            counted += m
            n += len(part)
            if greedy:
                prompts, answer = task.prompts(part)                    # (B, P), (B, A)
                out = greedy_decode(model, prompts,
                                    max_new_tokens=max_new_tokens or answer.shape[1])
                seq_ok += int(sequence_matches(out.tokens, answer).sum())
                for i in range(min(num_shown - len(shown), len(part))):
                    shown.append((vocab.decode(prompts[i]), vocab.decode(answer[i]),
                                  vocab.decode(out.tokens[i])))
    finally:
        model.train(was_training)
    return EvalResult(loss=total_loss / max(tokens, 1), token_accuracy=correct / max(counted, 1),
                      sequence_accuracy=seq_ok / n if greedy else float("nan"), num_examples=n,
                      num_tokens=counted, examples=shown)
