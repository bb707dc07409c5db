"""Token ids every task shares, and the symbol vocabulary of the synthetic tasks.

    PAD=0, BOS=1, EOS=2     the special tokens, first in every vocabulary this project builds
    Vocab(num_symbols)      the specials then `num_symbols` symbols; encode / decode text

Decoding (npformer.decoding) and training read the special ids from here, never from a task.
"""
from __future__ import annotations

import string
from typing import Sequence

import numpy as np

PAD, BOS, EOS = 0, 1, 2
SPECIALS = ("<pad>", "<bos>", "<eos>")
NUM_SPECIAL = len(SPECIALS)
_CHARS = string.ascii_lowercase + string.ascii_uppercase + string.digits


class Vocab:
    """PAD, BOS, EOS then `num_symbols` symbols; encodes text to ids and decodes ids to text."""

    def __init__(self, num_symbols: int):
        if not isinstance(num_symbols, (int, np.integer)) or isinstance(num_symbols, bool) \
                or num_symbols < 1:
            raise ValueError(f"num_symbols: expected a positive int, got {num_symbols!r}")
        self.num_symbols = int(num_symbols)
        if self.num_symbols <= len(_CHARS):
            symbols = list(_CHARS[: self.num_symbols])
        else:
            symbols = [f"t{k}" for k in range(self.num_symbols)]
        self.single_char = self.num_symbols <= len(_CHARS)
        self.tokens: list[str] = list(SPECIALS) + symbols
        self.index = {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def symbols(self) -> list[str]:
        return self.tokens[NUM_SPECIAL:]

    def encode(self, text: str, name: str = "text") -> list[int]:
        """Symbol ids of `text` (no BOS/EOS). Single-character vocabularies read "abc" or "a b c";
        others read whitespace-separated tokens. Unknown symbols are a ValueError naming them
        (and `name`, what the text is: "input 'xyz'" for a command's INPUT)."""
        if not isinstance(text, str):
            raise TypeError(f"{name}: expected a str, got {type(text).__name__}")
        parts = text.split() if (not self.single_char or any(c.isspace() for c in text)) \
            else list(text)
        unknown = [p for p in parts if p not in self.index or self.index[p] < NUM_SPECIAL]
        if unknown:
            shown = "".join(self.symbols) if self.single_char else " ".join(self.symbols[:8]) + " ..."
            spaced = self.single_char and any(len(p) > 1 for p in unknown)
            hint = " (a text with spaces is read as symbols separated by spaces, 'a b c'; several " \
                   "inputs are separate arguments, not one quoted string)" if spaced else ""
            raise ValueError(f"{name}: unknown symbols {sorted(set(unknown))}; this vocabulary has "
                             f"{self.num_symbols} symbols: {shown}{hint}")
        return [self.index[p] for p in parts]

    def decode(self, ids: Sequence[int], *, strip: bool = True) -> str:
        """Text of one id sequence. With `strip`: stop at the first EOS and drop PAD/BOS; without:
        every token, specials written as <pad>/<bos>/<eos>."""
        ids = np.asarray(ids).reshape(-1)  # (T,)
        out = []
        for i in ids.tolist():
            if not 0 <= i < len(self.tokens):
                raise ValueError(f"ids: expected token ids in [0, {len(self.tokens)}), got {i}")
            if strip:
                if i == EOS:
                    break
                if i < NUM_SPECIAL:
                    continue
            out.append(self.tokens[i])
        sep = "" if (self.single_char and strip) else " "
        return sep.join(out)

    def decode_batch(self, ids: np.ndarray, *, strip: bool = True) -> list[str]:
        """One string per row of a (B, T) id array."""
        ids = np.asarray(ids)
        if ids.ndim != 2:
            raise ValueError(f"ids: expected 2 dimensions (batch, seq), got shape {ids.shape}")
        return [self.decode(row, strip=strip) for row in ids]

    def __repr__(self) -> str:
        return f"Vocab(num_symbols={self.num_symbols}, size={self.size})"
