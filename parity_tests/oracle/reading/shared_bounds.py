"""A bound two constructor arguments both name: a translation model's builder takes a source and a
target length (`build_transformer(src_vocab_size, tgt_vocab_size, src_seq_len, tgt_seq_len, ...)`),
each sizing its side's positional table, and both mean max_len. Signature binding gives each source
to one argument, so the second length took the next size left by position (the layer count, a
table one position long). A bound is no drawn size: every argument naming it takes its value."""
from __future__ import annotations

import inspect

SHARED_BOUNDS = ("max_len",)
"""Sources that are upper bounds, not sizes of the example: more than one argument may take them."""


def shared_bound(claims: list[str], taken: set[str], default=inspect.Parameter.empty) -> str | None:
    """The bound an argument claims that another argument already took, or None. Only for an
    argument that is required or defaults to an int (a `position=None` stays None)."""
    if default is not inspect.Parameter.empty and type(default) is not int:
        return None
    return next((s for s in claims if s in SHARED_BOUNDS and s in taken), None)
