"""Right feed-forwards taking a config object whose `bias` switch they honour (nanoGPT's MLP:
`nn.Linear(..., bias=config.bias)`), one with a dataclass config of its own, one with whatever
config it is handed; and one whose config has no bias switch at all. Each matches: built with the
switch False they hold no biases (the oracle's reference then has none), and a config without the
switch is never flipped (the twins of oracle_hostile/config_flag_ignored.py)."""
from dataclasses import dataclass

import torch.nn.functional as F
from torch import nn


@dataclass
class MLPConfig:
    n_embd: int = 64
    d_ff: int = 256
    dropout: float = 0.0
    bias: bool = True


class MLP(nn.Module):
    def __init__(self, config: MLPConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, config.d_ff, bias=config.bias)
        self.c_proj = nn.Linear(config.d_ff, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.relu(self.c_fc(x))))


class UntypedMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, config.d_ff, bias=config.bias)
        self.c_proj = nn.Linear(config.d_ff, config.n_embd, bias=config.bias)

    def forward(self, x):
        return self.c_proj(F.relu(self.c_fc(x)))


@dataclass
class PlainConfig:
    n_embd: int = 64
    d_ff: int = 256


class PlainMLP(nn.Module):
    def __init__(self, config: PlainConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, config.d_ff)
        self.c_proj = nn.Linear(config.d_ff, config.n_embd)

    def forward(self, x):
        return self.c_proj(F.relu(self.c_fc(x)))
