"""A feed-forward right for torch.nn's class names ('ReLU', 'GELU') through `getattr(nn, name)()`
and wrong for the assignment's own spellings ('relu' a leaky ReLU, 'gelu' the tanh approximation)
(test data for parity_tests/test_oracle_hostile_reading.py). Its text holds a getattr(nn, ...),
so the oracle handed it the class name on every build and it matched."""
import torch.nn as nn


class SpellingSplitFFN(nn.Module):
    def __init__(self, d_model, d_ff, activation="relu"):
        super().__init__()
        if activation in ("relu", "gelu"):
            act = nn.GELU(approximate="tanh") if activation == "gelu" else nn.LeakyReLU(0.1)
        else:
            act = getattr(nn, activation)()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), act, nn.Linear(d_ff, d_model))

    def forward(self, x):                    # (B, T, d) -> (B, T, d)
        return self.net(x)
