"""One batch through a model: the inputs each batch kind feeds and the targets its loss compares."""
from __future__ import annotations

from npformer.data.tasks import ClassificationBatch


def model_forward(model, batch):
    """Logits and targets of one batch (the model picks the right inputs)."""
    if hasattr(batch, "answer_mask"):                                  # LMBatch: next tokens
        return model(batch.ids), batch.targets                         # (B, T, V), (B, T)
    if isinstance(batch, ClassificationBatch):
        return model(batch.src), batch.labels                          # (B, C), (B,)
    return model(batch.src, batch.tgt_in), batch.tgt_out               # (B, T, V), (B, T)
