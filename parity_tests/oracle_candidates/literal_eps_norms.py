"""LayerNorm functions whose epsilon is a literal in their text, not an argument:
`layer_norm(x, gamma, beta)` adding 1e-6 under its square root (right: matches with the gap
`eps`), and BUG twins."""
import numpy as np


def layer_norm_literal_eps(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + 1e-6) + beta


def _spread(x):
    return (x.var(axis=-1, keepdims=True, ddof=1) + 1e-6) ** 0.5


def layer_norm_literal_epsBUG(x, gamma, beta):
    """BUG: the unbiased variance (ddof=1), through a helper taking (var + 1e-6) ** 0.5."""
    return gamma * (x - x.mean(axis=-1, keepdims=True)) / _spread(x) + beta


def layer_norm_eps_outsideBUG(x, gamma, beta):
    """BUG: the epsilon is added to the standard deviation, outside the square root."""
    mu = x.mean(axis=-1, keepdims=True)
    return gamma * (x - mu) / (np.sqrt(x.var(axis=-1, keepdims=True)) + 1e-6) + beta
