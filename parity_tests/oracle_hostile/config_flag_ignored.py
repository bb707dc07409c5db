"""Feed-forwards (nanoGPT's MLP style) taking a config object whose `bias` switch they ignore:
always biased. One declares the config as a dataclass in the same file (`bias: bool = True`), one
is handed whatever config the oracle builds and reads `config.bias` only to keep it. A constructor
flag `bias=` is built False by the oracle's bias_ctor run (red-team round 13); a config's switch
was never touched (the oracle built it at its default True) nor named, so both matched. Real
callers building them with `bias=False` still get the biases added."""
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
        self.c_fc = nn.Linear(config.n_embd, config.d_ff)               # BUG: config.bias ignored
        self.c_proj = nn.Linear(config.d_ff, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.relu(self.c_fc(x))))


class UntypedMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, config.d_ff)
        self.c_proj = nn.Linear(config.d_ff, config.n_embd)
        self.use_bias = config.bias                                     # BUG: kept, never used

    def forward(self, x):
        return self.c_proj(F.relu(self.c_fc(x)))
