"""What the bad-input tests share: a tiny config, the expect() check of an error's type and
message, and a few id arrays."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf


def cfg(**changes):
    base = dict(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=1, num_decoder_layers=1,
                max_len=6, vocab_size=13, pad_id=0, num_classes=3, dropout=0.0, dtype="float64")
    base.update(changes)
    return nf.TransformerConfig(**base)


def expect(exc, fn, *needles, vs=True):
    """fn() raises `exc` (or a subclass) whose message holds every needle (the argument's name and
    the values that show what was wrong), and, with vs, both an "expected ..." (or "needs ...",
    "takes no ...") and a "got ..." part. vs=False is for errors that list names instead (missing / unexpected keys,
    unknown fields): the listed names are the needles, and they are the expected-vs-got difference.
    """
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    for n in needles:
        assert n in msg, f"{n!r} not in message: {msg!r}"
    if vs and "before forward" not in msg:
        assert any(w in msg for w in ("expected", "needs", "takes no")) and "got" in msg, \
            f"no expected-vs-got in: {msg!r}"
    return msg


SRC = np.array([[1, 2, 3], [4, 5, 0]])


TGT = np.array([[1, 2], [3, 4]])


IDS = np.array([[1, 2, 3, 4], [5, 6, 0, 0]])


def transformer():
    return nf.Transformer(cfg(), seed=1)
