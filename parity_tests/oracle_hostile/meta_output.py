"""Hostile: an output with a shape and a dtype but no values (a tensor on torch's "meta" device):
reading it raises inside the oracle's own conversion, which called the check an oracle bug
(`oracle_error`, "please report it") instead of the submission's wrong output."""
import torch


def attention(q, k, v, mask=None):
    return torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device="meta")
