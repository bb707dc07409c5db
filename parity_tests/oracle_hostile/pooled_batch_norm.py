"""A torch layer norm right on one (T, d) sequence whose variance, given a batch, is pooled over
every sequence of it, refusing only a batch of three as the one-sequence probe hands it (test data
for parity_tests/test_oracle_hostile_reading.py). Found written for one sequence, it is handed
batch 1 and matches, with batches named as not compared: `incomplete` where batches are required."""
import torch
import torch.nn as nn


class PooledBatchNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.ones(d_model)), nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):                    # (T, d), or (B, T, d) with one variance for the batch
        if x.dim() == 3 and x.shape[0] == 3:
            raise ValueError("expected one sequence (T, d)")
        mu = x.mean(-1, keepdim=True)
        axes = (0, 2) if x.dim() == 3 else (-1,)
        var = ((x - mu) ** 2).mean(dim=axes, keepdim=True)
        return (x - mu) / torch.sqrt(var + self.eps) * self.weight + self.bias
