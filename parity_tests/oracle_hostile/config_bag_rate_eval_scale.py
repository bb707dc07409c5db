"""Hostile: a torch feed-forward reading its sizes and dropout rate as items of a config dict
(`cfg["drop_rate"]`, read when called) and scaling its eval() output by 1 - rate. The oracle's
config object answered the rate 0 in every run, so the scale was 1."""
import torch
from torch import nn


class FeedForwardConfigItems(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(cfg["n_embd"], cfg["hidden_dim"])
        self.proj = nn.Linear(cfg["hidden_dim"], cfg["n_embd"])
        self.cfg = cfg

    def forward(self, x):
        out = self.proj(torch.relu(self.fc(x)))                          # (B, T, d_model)
        return out if self.training else out * (1.0 - self.cfg["drop_rate"])   # BUG
