"""Attention choosing its mask convention by the mask's dtype: a boolean mask is True where a key
is hidden, any other is 1 where a key may be attended (`mask <= 0` hidden). Right one matches
(masks handed over True = hidden, the gap named); the BUG twin scales its scores by d_k."""
import math

import torch


def attend_by_mask_dtype(q, k, v, mask=None, root=math.sqrt):
    scores = q @ k.transpose(-2, -1) / root(q.size(-1))
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(mask, float("-inf"))
        else:
            scores = scores.masked_fill(mask <= 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def attend_by_mask_dtypeBUG(q, k, v, mask=None):
    """BUG: the scores are divided by d_k, not by its square root."""
    return attend_by_mask_dtype(q, k, v, mask, root=float)
