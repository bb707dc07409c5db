"""An attention function wrong (without its 1/sqrt(d)) on every batch of more than one sequence,
where it also hands back a detached output. The search stopped there with `missing_gradient`, a
verdict taken for one decided after every example was compared, so no group got a search of its
own: the output and the weights scored 2 of 3 marks though both are wrong on every such batch."""
import math

import torch


def attention(q, k, v, mask=None):
    """Unscaled and detached when the batch has more than one sequence."""
    one = q.shape[0] == 1
    s = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if one else 1.0)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return (p @ v, p) if one else ((p @ v).detach(), p.detach())
