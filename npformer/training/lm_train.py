"""Evaluation of a CausalLM on a language-model task (npformer.data.lm_data); the twin is
torchformer/lm_train.py. Training itself is npformer.training.train.train (it reads LMBatch):

    logits = model(ids)                                      (B, T, V)   causal, PAD keys masked
    loss   = CrossEntropy(logits, targets)                   mean over the targets other than
                                                             the batch's ignore_id (PAD here)

evaluate_lm() reports, on a fixed set of held-out problems:
    loss              teacher-forced cross-entropy over every target token (the operands' digits
                      included: they are uniform, so this loss has a floor well above 0)
    token_accuracy    teacher-forced argmax == target on the answer tokens (a+b's digits and EOS)
    sequence_accuracy exact match: greedy completion of BOS "a+b=" is a+b's digits then EOS
"""
from __future__ import annotations

import numpy as np

from npformer.data.vocab import PAD

__all__ = ["lm_forward", "evaluate_lm", "evaluate_mlm", "answer_accuracy", "masked_examples", "tally_lm",
           "tally_mlm"]


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
    """EvalResult (npformer.training.train) of `model` on `examples` (default task.heldout(500))."""
    from npformer.decoding.generate import greedy_decode
    from npformer.layers.loss import CrossEntropyLoss
    if getattr(task, "is_mlm", False):
        return evaluate_mlm(model, task, examples, batch_size=batch_size, num_shown=num_shown)
    if getattr(task, "is_text", False):                                 # a text corpus
        from npformer.training.text_eval import evaluate_text
        return evaluate_text(model, task, examples, batch_size=min(batch_size, 64))

    def scores(batch):
        logits, targets = lm_forward(model, batch)                      # (B, T, V), (B, T)
        return logits, float(CrossEntropyLoss(ignore_index=batch.loss_ignore_index)(logits, targets))

    def decode(prompts, n):
        return greedy_decode(model, prompts, max_new_tokens=n).tokens   # (B, P + n)
    return tally_lm(model, task, examples, scores, decode if greedy else None, batch_size=batch_size,
                    num_shown=num_shown, max_new_tokens=max_new_tokens)


def tally_lm(model, task, examples, scores, decode, *, batch_size: int, num_shown: int,
             max_new_tokens: int | None):
    """The evaluation loop both twins run: `scores(batch)` -> (NumPy logits (B, T, V), mean loss);
    `decode(prompts, n)` -> NumPy greedy tokens (B, P + n), or None for no decoding."""
    from npformer.training.metrics import EvalResult, sequence_matches
    if examples is None:
        examples = task.heldout(500)
    vocab = task.vocab
    was_training = model.training
    model.eval()
    total_loss = tokens = correct = counted = seq_ok = n = 0
    shown: list = []
    try:
        for part, batch in task.iterate(examples, batch_size):
            logits, mean_loss = scores(batch)                           # (B, T, V), float
            total_loss += mean_loss * batch.num_tokens
            tokens += batch.num_tokens
            c, m = answer_accuracy(logits, batch)
            correct += c
            counted += m
            n += len(part)
            if decode is not None:
                prompts, answer = task.prompts(part)                    # (B, P), (B, A)
                got = decode(prompts, max_new_tokens or answer.shape[1])
                seq_ok += int(sequence_matches(got, answer).sum())
                for i in range(min(num_shown - len(shown), len(part))):
                    shown.append((vocab.decode(prompts[i]), vocab.decode(answer[i]),
                                  vocab.decode(got[i])))
    finally:
        model.train(was_training)
    return EvalResult(loss=total_loss / max(tokens, 1), token_accuracy=correct / max(counted, 1),
                      sequence_accuracy=seq_ok / n if decode is not None else float("nan"),
                      num_examples=n, num_tokens=counted, examples=shown)


# ---------------------------------------------------------------------------------------------------
# masked language modelling (npformer.data.mlm_data)
# ---------------------------------------------------------------------------------------------------
def masked_examples(vocab, batch, logits: np.ndarray, k: int) -> list:
    """(corrupted input, original, input with the scored positions filled by argmax) strings."""
    pred = np.asarray(logits).argmax(axis=-1)                           # (B, T)
    filled = np.where(batch.answer_mask, pred, batch.ids)               # (B, T)
    return [(vocab.decode(batch.ids[i]), vocab.decode(batch.clean[i]), vocab.decode(filled[i]))
            for i in range(min(k, batch.ids.shape[0]))]


def evaluate_mlm(model, task, examples=None, *, batch_size: int = 256, num_shown: int = 0):
    """EvalResult of a BertForMaskedLM on mirror sentences (npformer.data.mlm_data):
    loss and token_accuracy on the positions BERT's 80/10/10 rule selected (fixed seed);
    sequence_accuracy = single-mask accuracy (one [MASK] per sentence, the rest intact)."""
    from npformer.layers.loss import CrossEntropyLoss
    loss_fn = CrossEntropyLoss(ignore_index=PAD)

    def scores(batch):
        logits, targets = lm_forward(model, batch)                      # (B, T, V), (B, T)
        return logits, float(loss_fn(logits, targets))
    return tally_mlm(model, task, examples, scores, batch_size=batch_size, num_shown=num_shown)


def tally_mlm(model, task, examples, scores, *, batch_size: int, num_shown: int):
    """The masked-LM evaluation loop both twins run; `scores` as in tally_lm."""
    from npformer.training.metrics import EvalResult
    if examples is None:
        examples = task.heldout(500)
    was_training = model.training
    model.eval()
    total_loss = correct = counted = single_ok = n = 0
    shown: list = []
    try:
        for part, batch, one in task.iterate(examples, batch_size):
            logits, mean_loss = scores(batch)                           # (B, T, V), float
            total_loss += mean_loss * batch.num_tokens
            c, m = answer_accuracy(logits, batch)
            correct += c
            counted += m
            single_ok += answer_accuracy(scores(one)[0], one)[0]        # one [MASK] per row
            n += len(part)
            shown += masked_examples(task.vocab, batch, logits, num_shown - len(shown))
    finally:
        model.train(was_training)
    return EvalResult(loss=total_loss / max(counted, 1), token_accuracy=correct / max(counted, 1),
                      sequence_accuracy=single_ok / max(n, 1), num_examples=n, num_tokens=counted,
                      examples=shown)
