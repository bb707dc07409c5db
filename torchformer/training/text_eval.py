"""Evaluation of translation and classification on a user's rows of text for torchformer models:
the model calls npformer.training.text_tasks_eval needs (same metrics, same names; see there)."""
from __future__ import annotations

import torch

from npformer.data.vocab import PAD
from npformer.training import text_tasks_eval as E

__all__ = ["evaluate_text_task"]


def _ids(a, device) -> torch.Tensor:
    return torch.as_tensor(a, dtype=torch.int64, device=device)


@torch.no_grad()
def evaluate_text_task(model, task, examples=None, *, batch_size: int = 64, num_shown: int = 0):
    """TranslationEvalResult or ClassifyEvalResult of a torchformer model on `task`'s rows."""
    device = model.device
    if task.is_classification:
        return E.evaluate_classification(
            model, task, examples, batch_size=batch_size, num_shown=num_shown,
            logits=lambda batch: model(_ids(batch.src, device)).double().cpu().numpy())
    from torchformer.decoding.generate import greedy_decode
    from torchformer.layers.loss import CrossEntropyLoss
    loss_fn = CrossEntropyLoss(ignore_index=PAD)

    def scores(batch):
        logits = model(_ids(batch.src, device), _ids(batch.tgt_in, device))     # (B, T, V)
        tgt = _ids(batch.tgt_out, device)                                       # (B, T)
        k = batch.num_tokens
        correct = int(((logits.argmax(dim=-1) == tgt) & (tgt != PAD)).sum())
        return float(loss_fn(logits, tgt)) * k, correct, k

    def decode(src, max_new_tokens):
        out = greedy_decode(model, _ids(src, device), max_new_tokens=max_new_tokens,
                            suppress_ids=task.suppress_ids)
        return out.tokens.cpu().numpy()
    return E.evaluate_translation(model, task, examples, batch_size=batch_size, num_shown=num_shown,
                                  scores=scores, decode=decode)
