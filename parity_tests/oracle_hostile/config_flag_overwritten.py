"""A nanoGPT-style feed-forward whose constructor overwrites its config's `bias` switch with a
truthy int before reading it, so biases are always on (test data for
parity_tests/test_oracle_hostile_reading.py). The bias_ctor run flipped the config switches held
as bools after the build; this one held 1 there, was never flipped and matched."""
from dataclasses import dataclass

import torch.nn.functional as F
from torch import nn


@dataclass
class MLPConfig:
    n_embd: int = 64
    d_ff: int = 256
    bias: bool = True


class OverwrittenBiasMLP(nn.Module):
    def __init__(self, config: MLPConfig):
        super().__init__()
        config.bias = int(config.bias or 1)
        self.c_fc = nn.Linear(config.n_embd, config.d_ff, bias=bool(config.bias))
        self.c_proj = nn.Linear(config.d_ff, config.n_embd, bias=bool(config.bias))

    def forward(self, x):                    # (B, T, d) -> (B, T, d)
        return self.c_proj(F.relu(self.c_fc(x)))
