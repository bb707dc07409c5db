"""Cross-entropy over logits, torch's semantics (twin of npformer.layers.loss):

    loss = mean over counted targets of  -(1 - eps) log p[target] - eps / C * sum_c log p[c]

with p = softmax(logits), eps = label_smoothing; targets equal to ignore_index are not counted. As
npformer, a batch where every target is ignored is an error (F.cross_entropy would return NaN).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from torchformer.layers.module import Module


class CrossEntropyLoss(Module):
    """CrossEntropyLoss(ignore_index=-100, label_smoothing=0.0);
    forward(logits (..., C), targets (...) int) -> scalar tensor (mean over counted targets)."""

    def __init__(self, ignore_index: int = -100, label_smoothing: float = 0.0):
        super().__init__()
        self.ignore_index = int(ignore_index)
        self.label_smoothing = float(label_smoothing)

    def forward(self, logits: torch.Tensor, targets) -> torch.Tensor:
        C = logits.shape[-1]
        return F.cross_entropy(logits.reshape(-1, C), targets.reshape(-1),
                               ignore_index=self.ignore_index,
                               label_smoothing=self.label_smoothing)

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing:g}"
