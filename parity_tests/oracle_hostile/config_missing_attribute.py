"""A config-style constructor that reads an attribute no config object of the oracle has (it used
to end as oracle_error, "a bug in the oracle"): the submission's interface, an interface_error."""
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n = config.n_embd
        self.rate = config.attention_dropout_rate_of_my_own
        self.proj = nn.Linear(self.n, self.n)

    def forward(self, x, mask=None):
        return self.proj(x)
