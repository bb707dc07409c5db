"""Positional table functions taking the table's shape as their one argument, as NumPy code that
broadcasts the table onto an activation's shape writes them (`table(x.shape)`). Right one matches;
the BUG twin uses a base of 1000 instead of 10000."""
import numpy as np


def sinusoid_for_shape(shape, base=10000.0):
    length, d = shape[-2:]
    pos = np.arange(length, dtype=float)[:, None]
    rate = base ** (-np.arange(0, d, 2, dtype=float) / d)
    table = np.zeros((length, d))
    table[:, 0::2] = np.sin(pos * rate)
    table[:, 1::2] = np.cos(pos * rate[: d // 2])
    return np.zeros(shape) + table


def sinusoid_for_shapeBUG(shape):
    """BUG: base 1000 in the frequencies."""
    return sinusoid_for_shape(shape, base=1000.0)
