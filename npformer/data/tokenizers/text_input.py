"""The text a byte-level tokenizer (BPE, GPT-2) encodes, checked once for both: a str that UTF-8
can write. A lone surrogate (U+D800..U+DFFF) cannot be: Python puts one in a str for each byte that
was not UTF-8 when it decodes with errors="surrogateescape" (a command-line argument typed in
another encoding, os.listdir names), and encoding it raised the codec's bare "surrogates not
allowed", naming nothing.

The flags and counts of every tokenizer are checked here too: a flag must be a bool (a truthy
string such as "no" would otherwise switch it on), a count an integer (Python's or NumPy's).
"""
from __future__ import annotations

import operator

__all__ = ["as_int", "check_encodable", "check_flag"]


def check_flag(name: str, v) -> bool:
    """`v` when it is a bool, else TypeError naming `name`."""
    if not isinstance(v, bool):
        raise TypeError(f"{name}: expected a bool, got {v!r}")
    return v


def as_int(v) -> int | None:
    """`v` as a Python int when it is an integer (Python's or NumPy's, never a bool), else None."""
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def check_encodable(text, name: str = "text") -> None:
    """TypeError for a non-str, ValueError naming `name`, the first lone surrogate and its position
    (and the byte it stands for, when it came from surrogateescape) for text UTF-8 cannot write."""
    if not isinstance(text, str):
        raise TypeError(f"{name}: expected str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        ch = text[e.start]
        byte = (f" (the byte 0x{ord(ch) - 0xDC00:02x} that was not UTF-8, kept by surrogateescape)"
                if 0xDC80 <= ord(ch) <= 0xDCFF else "")
        raise ValueError(f"{name}: expected text UTF-8 can write, got a lone surrogate U+{ord(ch):04X} "
                         f"at character {e.start}{byte}; give the text as UTF-8") from None
