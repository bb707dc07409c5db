"""The module named like its package (a model-building file in the repositories of this style).
Loaded first on sys.path, it would hide the package itself. Our own code."""
from __future__ import annotations

VERSION = "0"
