"""The token ids a tokenizer's decode accepts, checked once for all of them:

    token_ids(ids, vocab_size=None) -> list[int]

`ids` is a 1-D sequence of integers: a list or tuple of int, a 1-D integer NumPy array, or anything
else whose items convert exactly to an index (`operator.index`: a torch integer tensor's items do).
Plain Python, as every tokenizer here. Refused, naming `ids`: a string (its characters would
otherwise be read as digits), a float or bool item (a float would otherwise be truncated to an id
nobody chose), an array of another rank, and, when `vocab_size` is given, an id outside
[0, vocab_size).
"""
from __future__ import annotations

import operator

__all__ = ["token_ids"]


def token_ids(ids, vocab_size: int | None = None) -> list[int]:
    """`ids` as a list of Python ints; see the module docstring for what is refused."""
    if isinstance(ids, (str, bytes, bytearray)):
        raise TypeError(f"ids: expected a sequence of integer token ids, got {type(ids).__name__} "
                        f"{ids[:40]!r}")
    ndim = getattr(ids, "ndim", None)
    if ndim is not None and ndim != 1:
        raise ValueError(f"ids: expected a 1-D sequence of token ids, got shape "
                         f"{tuple(getattr(ids, 'shape', ()))}")
    try:
        items = list(ids)
    except TypeError:
        raise TypeError(f"ids: expected a sequence of integer token ids, got "
                        f"{type(ids).__name__}") from None
    out = []
    for pos, item in enumerate(items):
        if isinstance(item, bool):                   # a NumPy bool has no operator.index either
            raise TypeError(f"ids: expected integer token ids, got bool {item} at position {pos}")
        try:
            i = operator.index(item)
        except TypeError:
            shown = repr(item) if isinstance(item, str) else str(item)[:40]
            raise TypeError(f"ids: expected integer token ids, got {type(item).__name__} "
                            f"{shown} at position {pos}") from None
        if vocab_size is not None and not 0 <= i < vocab_size:
            raise ValueError(f"ids: expected token ids in [0, {vocab_size}), got {i} at position "
                             f"{pos}")
        out.append(i)
    return out
