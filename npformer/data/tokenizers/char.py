"""A character-level tokenizer: one token per character seen in the training corpus.

Token ids:
    0 PAD, 1 BOS, 2 EOS        special tokens (never produced by encode's text, skipped by decode)
    3 UNK                      a character the corpus did not hold
    4, 5, ...                  the corpus's characters, sorted by code point

Sorting makes the vocabulary a function of the set of characters only (not of their order or
counts), so the same corpus always gives the same ids.
"""
from __future__ import annotations

from .ids import token_ids
from .text_input import check_flag

__all__ = ["BOS", "EOS", "NUM_SPECIAL", "PAD", "UNK", "CharTokenizer"]

PAD, BOS, EOS, UNK = 0, 1, 2, 3
NUM_SPECIAL = 4
UNK_TEXT = "\ufffd"            # what decode writes for UNK (Unicode's replacement character)


class CharTokenizer:
    """`CharTokenizer.train(text)` (or CharTokenizer(chars)), then encode / decode."""

    kind = "char"

    def __init__(self, chars: str):
        if not isinstance(chars, str):
            raise TypeError(f"chars: expected str, got {type(chars).__name__}")
        if len(set(chars)) != len(chars):
            raise ValueError(f"chars: expected distinct characters, got {chars[:80]!r}")
        self.chars = chars
        self.index = {c: NUM_SPECIAL + i for i, c in enumerate(chars)}    # character -> id

    @classmethod
    def train(cls, text: str) -> CharTokenizer:
        """The vocabulary of every distinct character in `text`."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected str, got {type(text).__name__}")
        if not text:
            raise ValueError("text: expected text to learn the characters from, got an empty string (its "
                             "vocabulary would hold only the special tokens, and every character would "
                             "encode as unknown)")
        return cls("".join(sorted(set(text))))

    @property
    def vocab_size(self) -> int:
        return NUM_SPECIAL + len(self.chars)

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Token ids of `text` (UNK for an unseen character), optionally with BOS first, EOS last."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected str, got {type(text).__name__}")
        check_flag("add_bos", add_bos)
        check_flag("add_eos", add_eos)
        ids = [self.index.get(c, UNK) for c in text]
        return ([BOS] if add_bos else []) + ids + ([EOS] if add_eos else [])

    def unseen(self, text: str) -> str:
        """The distinct characters of `text` that the vocabulary lacks (each encodes to UNK), in
        order of first appearance."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected str, got {type(text).__name__}")
        return "".join(dict.fromkeys(c for c in text if c not in self.index))

    def decode(self, ids) -> str:
        """Text of token ids: PAD, BOS and EOS are skipped, UNK becomes U+FFFD."""
        out = []
        for i in token_ids(ids, self.vocab_size):
            if i == UNK:
                out.append(UNK_TEXT)
            elif i >= NUM_SPECIAL:
                out.append(self.chars[i - NUM_SPECIAL])
        return "".join(out)

    def to_dict(self) -> dict:
        """A JSON-able description (to save inside a checkpoint); from_dict reads it back."""
        return {"type": self.kind, "chars": self.chars}

    @classmethod
    def from_dict(cls, d: dict) -> CharTokenizer:
        if not isinstance(d, dict) or d.get("type") != cls.kind or not isinstance(d.get("chars"), str):
            raise ValueError(f"tokenizer dict: expected {{'type': 'char', 'chars': str}}, "
                             f"got {str(d)[:80]!r}")
        return cls(d["chars"])

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"
