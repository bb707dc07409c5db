"""Torch code that is not an nn.Module."""
import torch


class TensorDictFeedForward:
    """Torch code that is not an nn.Module: tensors kept in a params dict (a hand-written layer
    library on torch tensors)."""

    def __init__(self, d_model, d_ff):
        self.params = {"W1": torch.zeros(d_model, d_ff), "W2": torch.zeros(d_ff, d_model)}

    def forward(self, x):
        return torch.relu(x @ self.params["W1"]) @ self.params["W2"]
