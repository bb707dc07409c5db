"""NumPy positional modules in the ViT style: a LEARNED table drawn at construction, used by default,
beside a sinusoid computed in the constructor and used only when `fixed=True`. The learned table is
the sinusoid's slot (a `table` gap, as for a learned table alone); the computed one is left as it is.
Twins whose docstring says BUG have one planted mistake."""
import numpy as np


class SwitchablePositions:
    def __init__(self, max_len, d_model, fixed=False):
        self.fixed = fixed
        self.param = np.random.normal(0.0, 0.02, (1, max_len, d_model))
        self.param_delta = np.zeros_like(self.param)
        pos = np.arange(max_len)[:, None]
        i = np.arange(d_model)[None, :]
        angle = pos / np.power(10000.0, (i - i % 2) / d_model)
        self.posk = np.where(i % 2 == 0, np.sin(angle), np.cos(angle))[None]

    def table(self, T):
        return (self.posk if self.fixed else self.param)[:, :T]

    def forward(self, x):
        return x + self.table(x.shape[1])


class SwitchablePositionsBUG(SwitchablePositions):
    """BUG: the learned table is read from position 1 on (an offset lookup)."""

    def table(self, T):
        return (self.posk[:, :T] if self.fixed else self.param[:, 1:T + 1])


class WholeTablePositions(SwitchablePositions):
    """Adds the whole table, whatever the length of x: fits only inputs of max_len positions."""

    def forward(self, x):
        return x + (self.posk if self.fixed else self.param)
