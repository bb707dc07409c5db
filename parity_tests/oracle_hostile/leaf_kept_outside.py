"""Hostile: plain torch feed-forwards (no nn.Module) whose weights W1, W2 are computed once, at
construction, as `raw * 0.1` from leaf tensors the object does not hold: kept in a module-level
dict, or only in a closure its `params` hands an optimizer. The optimizer writes the leaves, never
the copies, so the layer never learns. The walk counted only leaves the object holds, so the
copies were read as the weights (MATCH with the non-leaf note)."""
import torch

_LEAVES = {}


class FeedForwardLeavesInModuleDict:
    def __init__(self, d_model, d_ff):
        raw1 = torch.randn(d_ff, d_model, dtype=torch.float64, requires_grad=True)
        raw2 = torch.randn(d_model, d_ff, dtype=torch.float64, requires_grad=True)
        _LEAVES[id(self)] = (raw1, raw2)                     # what its training script optimizes
        self.W1, self.W2 = raw1 * 0.1, raw2 * 0.1            # BUG: copies made once
        self.b1 = torch.zeros(d_ff, dtype=torch.float64, requires_grad=True)
        self.b2 = torch.zeros(d_model, dtype=torch.float64, requires_grad=True)

    def forward(self, x):
        h = torch.relu(x @ self.W1.T + self.b1)                # (B, T, d_ff)
        return h @ self.W2.T + self.b2


class FeedForwardLeavesInClosure(FeedForwardLeavesInModuleDict):
    def __init__(self, d_model, d_ff):
        raw1 = torch.randn(d_ff, d_model, dtype=torch.float64, requires_grad=True)
        raw2 = torch.randn(d_model, d_ff, dtype=torch.float64, requires_grad=True)
        self.b1 = torch.zeros(d_ff, dtype=torch.float64, requires_grad=True)
        self.b2 = torch.zeros(d_model, dtype=torch.float64, requires_grad=True)
        self.params = lambda: (raw1, self.b1, raw2, self.b2)  # handed to the optimizer
        self.W1, self.W2 = raw1 * 0.1, raw2 * 0.1            # BUG: copies made once
