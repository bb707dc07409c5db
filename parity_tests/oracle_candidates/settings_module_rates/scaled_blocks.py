# ruff: noqa: F403, F405
"""A feed-forward reading the settings module's dropout rate twice: as the dropout's rate and as
an inference scale. Wrong (BUG)."""
from blocks import SettingsFeedForward
from hparams import *


class SettingsFeedForwardInferenceScaledBUG(SettingsFeedForward):
    """BUG: scales its output by (1 - p_drop) in eval() as non-inverted dropout would, on top of
    the inverted dropout nn.Dropout already does."""

    def forward(self, x):
        out = super().forward(x)
        return out if self.training else out * (1 - p_drop)
