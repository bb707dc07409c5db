"""Wrong for every masked input: an attention whose signature has no mask at all (no patch). Its
signature must not narrow what a grade compares."""
import math

import torch  # noqa: F401 - a torch submission


def attention(query, key, value):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = scores.softmax(dim=-1)
    return weights @ value, weights
