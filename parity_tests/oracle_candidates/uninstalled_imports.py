"""NumPy feed-forwards in a file that imports packages the grader does not have (written for the
oracle's reach tests, in the style of real files: an import an editor added and nobody uses, a
library only one helper needs). The package names below are made up so that they are never
installed. Correct unless a docstring says BUG."""
import numpy as np
from absent_editor_helpers.model import attach_exception_info  # noqa: F401  (never used)
from absent_special_functions.special import erf


def relu(z):
    return np.maximum(z, 0.0)


def gelu_exact(z):
    return 0.5 * z * (1.0 + erf(z / np.sqrt(2.0)))


class FeedForward:
    def __init__(self, d_model, d_ff):
        self.w1 = np.random.randn(d_model, d_ff) * 0.02
        self.b1 = np.zeros(d_ff)
        self.w2 = np.random.randn(d_ff, d_model) * 0.02
        self.b2 = np.zeros(d_model)

    def forward(self, x):
        return relu(x @ self.w1 + self.b1) @ self.w2 + self.b2


class FeedForward_BUG(FeedForward):
    """BUG: the activation is applied after the second projection instead of between the two."""

    def forward(self, x):
        return relu((x @ self.w1 + self.b1) @ self.w2 + self.b2)


class GeluFeedForward(FeedForward):
    """Needs the missing package (exact GELU through its erf): cannot run where it is absent."""

    def forward(self, x):
        return gelu_exact(x @ self.w1 + self.b1) @ self.w2 + self.b2
