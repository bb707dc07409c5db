"""A NumPy feed-forward (forward only) whose three widths are named as counts of units,
`FeedForward(n_input, n_hidden, n_output)`, as general MLP code names them. The right class has a
planted-bug twin (BUG)."""
import numpy as np


class UnitCountFeedForward:
    def __init__(self, n_input, n_hidden, n_output):
        self.w1, self.b1 = np.random.randn(n_input, n_hidden), np.zeros((1, n_hidden))
        self.w2, self.b2 = np.random.randn(n_hidden, n_output), np.zeros((1, n_output))

    def forward(self, x):
        return np.maximum(x @ self.w1 + self.b1, 0) @ self.w2 + self.b2


class UnitCountFeedForwardBUG(UnitCountFeedForward):
    def forward(self, x):
        return np.maximum(x @ self.w1, 0) @ self.w2 + self.b2 + self.b1.sum()     # b1 misplaced
