"""The module named like the package (the whole model, in the repositories of this style): first
on sys.path, it would hide the package itself from the files beside it. Our own code."""
from __future__ import annotations

from mlppkg.model.block import FeedForward

MODEL_PARTS = (FeedForward,)
