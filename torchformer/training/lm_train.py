"""Evaluation of a torchformer CausalLM on a language-model task: twin of npformer/lm_train.py
(same metrics, same names; see there)."""
from __future__ import annotations

import torch

from npformer.data.vocab import PAD
from npformer.training.lm_train import answer_accuracy, tally_lm, tally_mlm

__all__ = ["lm_forward", "evaluate_lm", "evaluate_mlm", "answer_accuracy", "evaluate_text"]


def lm_forward(model, batch, device):
    """Logits (B, T, V) and targets (B, T), tensors on `device`, of one LMBatch."""
    ids = torch.as_tensor(batch.ids, dtype=torch.int64, device=device)
    return model(ids), torch.as_tensor(batch.targets, dtype=torch.int64, device=device)


@torch.no_grad()
def evaluate_lm(model, task, examples=None, *, batch_size: int = 256, greedy: bool = True,
                num_shown: int = 0, max_new_tokens: int | None = None):
    """EvalResult of `model` on `examples` (see npformer.training.lm_train.evaluate_lm)."""
    from torchformer.decoding.generate import greedy_decode
    from torchformer.layers.loss import CrossEntropyLoss
    if getattr(task, "is_mlm", False):
        return evaluate_mlm(model, task, examples, batch_size=batch_size, num_shown=num_shown)
    if getattr(task, "is_text", False):                                 # a text corpus
        return evaluate_text(model, task, examples, batch_size=min(batch_size, 64))
    device = model.device

    def scores(batch):
        logits, targets = lm_forward(model, batch, device)              # (B, T, V), (B, T)
        loss = CrossEntropyLoss(ignore_index=batch.loss_ignore_index)(logits, targets)
        return logits.cpu().numpy(), float(loss)

    def decode(prompts, n):
        return greedy_decode(model, prompts, max_new_tokens=n).tokens.cpu().numpy()
    return tally_lm(model, task, examples, scores, decode if greedy else None, batch_size=batch_size,
                    num_shown=num_shown, max_new_tokens=max_new_tokens)


@torch.no_grad()
def evaluate_mlm(model, task, examples=None, *, batch_size: int = 256, num_shown: int = 0):
    """EvalResult of a BertForMaskedLM on mirror sentences (see npformer.training.lm_train.evaluate_mlm)."""
    from torchformer.layers.loss import CrossEntropyLoss
    device = model.device
    loss_fn = CrossEntropyLoss(ignore_index=PAD)

    def scores(batch):
        logits, targets = lm_forward(model, batch, device)              # (B, T, V), (B, T)
        return logits.cpu().numpy(), float(loss_fn(logits, targets))
    return tally_mlm(model, task, examples, scores, batch_size=batch_size, num_shown=num_shown)


@torch.no_grad()
def evaluate_text(model, task, examples=None, *, batch_size: int = 64, sample_seed: int = 0):
    """TextEvalResult of a CausalLM on a text corpus (see npformer.training.text_eval)."""
    from npformer.training import text_eval
    from torchformer.decoding.sampling import sample
    from torchformer.layers.loss import CrossEntropyLoss
    device = model.device

    def scores(batch):
        logits, targets = lm_forward(model, batch, device)              # (B, T, V), (B, T)
        k = batch.num_tokens
        keep = torch.as_tensor(batch.target_mask, device=device)       # (B, T)
        correct = int(((logits.argmax(dim=-1) == targets) & keep).sum())
        loss_fn = CrossEntropyLoss(ignore_index=batch.loss_ignore_index)
        return float(loss_fn(logits, targets)) * k, correct, k

    def draw(prompt, max_new_tokens, seed, suppress_ids):
        p = torch.as_tensor(prompt, dtype=torch.int64, device=device)
        out = sample(model, p, max_new_tokens=max_new_tokens,
                     temperature=text_eval.SAMPLE_TEMPERATURE, seed=seed, eos_id=None,
                     suppress_ids=suppress_ids)
        return out.tokens.cpu().numpy()
    return text_eval.evaluate_text(model, task, examples, batch_size=batch_size,
                                   sample_seed=sample_seed, scores=scores, draw=draw)
