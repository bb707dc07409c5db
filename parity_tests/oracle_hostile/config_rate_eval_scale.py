"""Hostile: torch feed-forwards taking their dropout rate through a config object and scaling
their eval() output by 1 - rate (a non-inverted dropout's inference rule, on top of nn.Dropout's
inverted one). The oracle set a config's rates to 0 and never built it at another rate, so the
scale was 1 in every run: a config it builds as this project's TransformerConfig (no annotation,
`config.dropout`), a dataclass named by the annotation, and the module's own config class."""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class MLPConfig:
    n_embd: int = 768
    d_ff: int = 3072
    resid_pdrop: float = 0.1


class FeedForwardProjectConfig(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.linear1 = nn.Linear(config.d_model, config.d_ff)
        self.linear2 = nn.Linear(config.d_ff, config.d_model)
        self.drop = nn.Dropout(config.dropout)
        self.keep = 1.0 - config.dropout

    def forward(self, x):
        out = self.linear2(self.drop(torch.relu(self.linear1(x))))      # (B, T, d_model)
        return out if self.training else out * self.keep                 # BUG: scaled in eval()


class FeedForwardAnnotatedConfig(nn.Module):
    def __init__(self, config: MLPConfig):
        super().__init__()
        self.fc = nn.Linear(config.n_embd, config.d_ff)
        self.proj = nn.Linear(config.d_ff, config.n_embd)
        self.drop = nn.Dropout(config.resid_pdrop)
        self.keep = 1.0 - config.resid_pdrop

    def forward(self, x):
        out = self.drop(self.proj(torch.relu(self.fc(x))))
        return out if self.training else out * self.keep                 # BUG: scaled in eval()


class FeedForwardModuleConfig(FeedForwardAnnotatedConfig):
    def __init__(self, config):                  # no annotation: the module's MLPConfig() is built
        super().__init__(config)
