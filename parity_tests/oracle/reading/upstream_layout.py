"""The upstream gradient handed to a candidate's backward, in the layout the check gave it.

The layout modes (sandbox/layout_modes.py) hand some upstream gradients over read-only and laid out
unusually (a broadcast, negative strides, a slice of a wider buffer); these keep that layout, so code
that assumes a contiguous gradient is run on one that is not.
"""
from __future__ import annotations

import numpy as np


def upstream(d: np.ndarray, dtype) -> np.ndarray:
    """The upstream gradient in the check's dtype; a read-only one already in it (sandbox/layout_modes
    made it: a broadcast, negative strides, a slice of a wider buffer) handed over as it is."""
    return d if not d.flags.writeable and d.dtype == np.dtype(dtype) else d.astype(dtype)


def upstream_tensor(torch, d: np.ndarray, dtype):
    """The upstream gradient as a tensor in its layout, a broadcast (stride 0) as an expanded one."""
    one = tuple(slice(0, 1) if s == 0 and n > 1 else slice(None) for s, n in zip(d.strides, d.shape))
    return torch.from_numpy(np.array(d[one], dtype=dtype, order="K")).expand(d.shape)
