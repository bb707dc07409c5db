"""A config-style constructor that reads an attribute no config object of the oracle has and whose
name says nothing the oracle could derive (it used to end as oracle_error, "a bug in the oracle"):
the submission's interface, an interface_error naming the attribute."""
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n = config.n_embd
        self.flux = config.flux_capacitance
        self.proj = nn.Linear(self.n, self.n)

    def forward(self, x, mask=None):
        return self.proj(x)
