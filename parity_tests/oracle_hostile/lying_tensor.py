"""Wrong values in a torch.Tensor subclass whose numpy()/comparisons claim anything."""
import torch


class Liar(torch.Tensor):
    def __eq__(self, other):
        return torch.ones(self.shape, dtype=torch.bool)

    def __sub__(self, other):
        return torch.zeros(self.shape)

    def allclose(self, *a, **k):
        return True


def attention(query, key, value, mask=None):
    B, H, T, _ = query.shape
    out = (query.sum() * 0 + torch.full((B, H, T, value.shape[-1]), 3.0, dtype=query.dtype)).as_subclass(Liar)
    return out
