"""A nanoGPT-style feed-forward reading its config's `bias` switch only when called
(`self.config.bias` in forward), and wrong when it is off: the biases kept and the output scaled
(test data for parity_tests/test_oracle_hostile_reading.py). The bias_ctor run flipped the config
switches the code had read by the end of its build; this one had read none, so it was never built
with bias off and matched."""
import torch.nn.functional as F
from torch import nn


class CalledBiasMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.c_fc = nn.Linear(config.n_embd, config.d_ff)
        self.c_proj = nn.Linear(config.d_ff, config.n_embd)

    def forward(self, x):                    # (B, T, d) -> (B, T, d)
        out = self.c_proj(F.relu(self.c_fc(x)))
        return out if self.config.bias else 1.5 * out
